// Package atomicfile replaces files atomically: the new content goes to a temporary file in the
// target's directory, which is fsynced, closed and renamed over the target, and then the directory
// is fsynced. A reader or a crash sees either the whole old file or the whole new one, never a torn
// one, and a failed write leaves the old file untouched and no temporary file behind.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// tempPattern is the os.CreateTemp pattern of the temporary file of path: hidden, in the same
// directory (a rename is atomic only within one file system), and named after its target so that
// a stray one left by a killed process says where it came from.
func tempPattern(path string) string { return "." + filepath.Base(path) + ".tmp-*" }

// WriteFile atomically replaces path with data. The file gets exactly the permission bits perm
// (the umask does not apply, unlike os.WriteFile).
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write atomically replaces path with what write writes to its (buffered) writer. If write returns
// an error or panics, or any later step fails before the rename, the temporary file is removed and
// path keeps its old content. The file gets exactly the permission bits perm. Errors name path and
// the step that failed; an error from write is wrapped unchanged (errors.Is sees it).
func Write(path string, perm os.FileMode, write func(w io.Writer) error) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, tempPattern(path))
	if err != nil {
		return fmt.Errorf("atomic write %s: create temporary file: %w", path, err)
	}
	renamed, closed := false, false
	defer func() {
		if renamed {
			return
		}
		// Clean-up after a failure (or a panic in write); the first error is the one reported.
		if !closed {
			_ = tmp.Close()
		}
		_ = os.Remove(tmp.Name())
	}()
	fail := func(step string, err error) error {
		return fmt.Errorf("atomic write %s: %s: %w", path, step, err)
	}
	bw := bufio.NewWriterSize(tmp, 64<<10)
	if err := write(bw); err != nil {
		return fail("write", err)
	}
	if err := bw.Flush(); err != nil {
		return fail("write", err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return fail("set permissions", err)
	}
	if err := tmp.Sync(); err != nil {
		return fail("fsync", err)
	}
	closed = true
	if err := tmp.Close(); err != nil {
		return fail("close", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fail("rename", err)
	}
	renamed = true
	// The rename is durable only once the directory entry is on disk.
	if err := syncDir(dir); err != nil {
		return fail("fsync directory (the new file is in place but may not survive a crash)", err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		_ = d.Close()
		return err
	}
	return d.Close()
}
