//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Process is the user + system time of the whole process so far (every thread: the Go workers and
// OpenBLAS's), or 0 when the system does not say.
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
