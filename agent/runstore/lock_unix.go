//go:build unix

package runstore

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Lock takes an exclusive advisory lock (flock) on the run directory itself, held until the Lock
// is closed. The kernel drops it when the process exits, however it exits, so a killed run
// leaves no stale lock behind. A lock held by another open file (another process, or another run
// in this one) is ErrRunInUse.
func (d Dir) Lock() (*Lock, error) {
	fh, err := os.Open(string(d))
	if err != nil {
		return nil, fmt.Errorf("lock run directory: %w", err)
	}
	if err := syscall.Flock(int(fh.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		fh.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s %w", d, ErrRunInUse)
		}
		return nil, fmt.Errorf("lock run directory %s: %w", d, err)
	}
	return &Lock{fh: fh}, nil
}
