//go:build unix

package bridge

import "syscall"

// procAttr puts the server in its own process group so signals reach it and not us.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func killGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }
