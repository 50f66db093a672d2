package server

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestSweepStale: a start sweeps the socket directories of clients that died without removing
// theirs, and leaves those of live clients and live servers alone.
func TestSweepStale(t *testing.T) {
	tmp := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(name string, listen bool) string {
		d := filepath.Join(tmp, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		sock := filepath.Join(d, socketName)
		if listen {
			ln, err := net.Listen("unix", sock)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
		} else if err := os.WriteFile(sock, nil, 0o600); err != nil { // what a killed server leaves
			t.Fatal(err)
		}
		return d
	}
	old := time.Now().Add(-2 * legacyStaleAge)
	stale := mk(fmt.Sprintf("%s%d-1", socketDirPrefix, dead.Process.Pid), false)
	staleLegacy := mk(socketDirPrefix+"123456", false)
	if err := os.Chtimes(staleLegacy, old, old); err != nil {
		t.Fatal(err)
	}
	liveOwner := mk(fmt.Sprintf("%s%d-2", socketDirPrefix, os.Getppid()), false)
	liveServer := mk(fmt.Sprintf("%s%d-3", socketDirPrefix, dead.Process.Pid), true)
	youngLegacy := mk(socketDirPrefix+"654321", false)
	notOurs := mk("something-else", false)
	sweepStale(tmp)
	for d, wantGone := range map[string]bool{stale: true, staleLegacy: true, liveOwner: false, liveServer: false, youngLegacy: false, notOurs: false} {
		_, err := os.Stat(d)
		if gone := errors.Is(err, os.ErrNotExist); gone != wantGone {
			t.Errorf("%s: gone %v, want %v", filepath.Base(d), gone, wantGone)
		}
	}
}
