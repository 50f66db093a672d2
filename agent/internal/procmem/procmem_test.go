package procmem

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

func TestReadParsesStatus(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "42")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	status := "Name:\tpython3\nState:\tS (sleeping)\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\nThreads:\t4\n"
	if err := os.WriteFile(filepath.Join(dir, "status"), []byte(status), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte("42 (python3 (x)) S 7 42 42 0"), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := Read(root, 42)
	if err != nil {
		t.Fatal(err)
	}
	if u.Name != "python3" || u.RSS != 100<<20 || u.Peak != 200<<20 {
		t.Errorf("usage %+v", u)
	}
	kids, err := Children(root, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(kids) != 1 || kids[0].PID != 42 {
		t.Errorf("children of 7: %+v", kids)
	}
	if kids, _ := Children(root, 8); len(kids) != 0 {
		t.Errorf("children of 8: %+v", kids)
	}
	if _, err := Read(root, 43); err == nil {
		t.Error("a missing process: no error")
	}
}

// On Linux the real /proc gives this process's memory and finds a child it started.
func TestReadsTheRealProc(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	self, err := Read("/proc", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if self.RSS <= 0 || self.Peak < self.RSS {
		t.Errorf("self %+v", self)
	}
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	deadline := time.Now().Add(2 * time.Second)
	for {
		kids, err := Children("/proc", os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range kids {
			if k.PID == cmd.Process.Pid && k.RSS > 0 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %d not among %+v", cmd.Process.Pid, kids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
