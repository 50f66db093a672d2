package atomicfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dirNames lists the entries of dir, so a test can see that no temporary file is left behind.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteFileWritesContentAndPermissions(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 20000) // 320 KB: several buffer flushes
	tests := []struct {
		name string
		old  []byte // nil: no file before
		data []byte
		perm os.FileMode
	}{
		{"new file", nil, []byte("hello\n"), 0o644},
		{"replace longer with shorter", []byte("a much longer old content\n"), []byte("short"), 0o644},
		{"private permissions", nil, []byte("secret"), 0o600},
		{"group-writable executable", nil, []byte("#!/bin/sh\n"), 0o775},
		{"empty content", []byte("old"), nil, 0o640},
		{"large content", []byte("old"), big, 0o644},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f.bin")
			if tc.old != nil {
				if err := os.WriteFile(path, tc.old, 0o666); err != nil {
					t.Fatal(err)
				}
			}
			if err := WriteFile(path, tc.data, tc.perm); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.data) {
				t.Fatalf("content: %d bytes, want %d", len(got), len(tc.data))
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != tc.perm {
				t.Errorf("permissions %v, want %v", st.Mode().Perm(), tc.perm)
			}
			if names := dirNames(t, dir); len(names) != 1 || names[0] != "f.bin" {
				t.Errorf("directory holds %q, want only f.bin", names)
			}
		})
	}
}

// The file is replaced, not written into: a hard link to the old file keeps the old content.
func TestWriteReplacesTheInode(t *testing.T) {
	dir := t.TempDir()
	path, link := filepath.Join(dir, "f"), filepath.Join(dir, "old-link")
	if err := WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{path: "new", link: "old"} {
		if got, err := os.ReadFile(p); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", p, got, err, want)
		}
	}
}

var errDiskOnFire = errors.New("disk on fire")

func TestFailedWriteKeepsOldFileAndLeavesNoTemp(t *testing.T) {
	tests := []struct {
		name  string
		write func(w io.Writer) error
		// target makes path something a file cannot be renamed over (a directory) when set.
		targetIsDir bool
		wantErr     []string
		wantIs      error
	}{
		{
			name:    "writer fails at once",
			write:   func(io.Writer) error { return errDiskOnFire },
			wantErr: []string{"write", "disk on fire"},
			wantIs:  errDiskOnFire,
		},
		{
			name: "writer fails after writing more than a buffer",
			write: func(w io.Writer) error {
				if _, err := w.Write(bytes.Repeat([]byte("x"), 200<<10)); err != nil {
					return err
				}
				return errDiskOnFire
			},
			wantErr: []string{"write", "disk on fire"},
			wantIs:  errDiskOnFire,
		},
		{
			name:        "rename over a directory fails",
			write:       func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err },
			targetIsDir: true,
			wantErr:     []string{"rename"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.bin")
			keep := filepath.Join(path, "inside") // the old content, inside the directory case
			if tc.targetIsDir {
				if err := os.Mkdir(path, 0o755); err != nil {
					t.Fatal(err)
				}
			} else {
				keep = path
			}
			if err := os.WriteFile(keep, []byte("old content"), 0o644); err != nil {
				t.Fatal(err)
			}
			before := dirNames(t, dir)
			err := Write(path, 0o644, tc.write)
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range append(tc.wantErr, path) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("error %v does not wrap %v", err, tc.wantIs)
			}
			if got, err := os.ReadFile(keep); err != nil || string(got) != "old content" {
				t.Errorf("old file now %q, %v", got, err)
			}
			if after := dirNames(t, dir); strings.Join(after, ",") != strings.Join(before, ",") {
				t.Errorf("directory holds %q after the failure, want %q", after, before)
			}
		})
	}
}

func TestPanickingWriterLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want the writer's panic", r)
			}
		}()
		_ = Write(path, 0o644, func(w io.Writer) error {
			_, _ = io.WriteString(w, "partial")
			panic("boom")
		})
	}()
	if got, err := os.ReadFile(path); err != nil || string(got) != "old" {
		t.Errorf("file now %q, %v", got, err)
	}
	if names := dirNames(t, dir); len(names) != 1 {
		t.Errorf("directory holds %q, want only f", names)
	}
}

func TestMissingDirectoryIsAClearError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no-such-dir", "f")
	err := WriteFile(path, []byte("x"), 0o644)
	if err == nil || !strings.Contains(err.Error(), path) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("error %v, want one naming %s and wrapping ErrNotExist", err, path)
	}
}
