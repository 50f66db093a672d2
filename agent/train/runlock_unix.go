//go:build unix

package train

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockRunDir takes an exclusive advisory lock (flock) on the run directory dir itself, held until
// the returned file is closed. The kernel drops it when the process exits, however it exits, so a
// killed run leaves no stale lock behind. A lock held by another open file (another process, or
// another run in this one) is ErrRunInUse.
func lockRunDir(dir string) (*os.File, error) {
	fh, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("lock run directory: %w", err)
	}
	if err := syscall.Flock(int(fh.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		fh.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s %w", dir, ErrRunInUse)
		}
		return nil, fmt.Errorf("lock run directory %s: %w", dir, err)
	}
	return fh, nil
}

// InUse reports whether another run holds the lock of the run directory dir, that is, is training
// into it now (false for a directory that does not exist).
func InUse(dir string) bool {
	fh, err := lockRunDir(dir)
	if err != nil {
		return errors.Is(err, ErrRunInUse)
	}
	fh.Close()
	return false
}
