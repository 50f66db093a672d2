//go:build unix

package auth

import (
	"io/fs"
	"syscall"
)

// owner is the uid a file belongs to.
func owner(info fs.FileInfo) (int, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
