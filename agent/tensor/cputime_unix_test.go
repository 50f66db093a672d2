//go:build unix

package tensor

import (
	"syscall"
	"time"
)

// processCPU is the user + system time of the whole process so far (every thread).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
