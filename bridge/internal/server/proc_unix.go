//go:build unix

package server

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// procAttr puts the server in its own process group so signals reach it and not us.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func killGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }

// processRuns reports whether a process with this pid exists (one owned by another user counts).
func processRuns(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// ownedByUs reports whether a file belongs to this process's user.
func ownedByUs(info fs.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
