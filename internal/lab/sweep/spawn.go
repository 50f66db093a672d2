package sweep

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/runstore"
)

// LogFile is where the output of run r's subprocess goes: <dir>/logs/<id>.log.
func LogFile(dir string, r Run) string { return filepath.Join(dir, "logs", r.ID+".log") }

// SpawnIndex runs `pcl sweep run --dir dir --index r.Index` in a subprocess of this binary,
// single-threaded (GOMAXPROCS=1, OPENBLAS_NUM_THREADS=1: the per-step products of a run are too
// small to keep two BLAS threads busy, so one single-threaded run per core finishes a sweep
// sooner), its output appended to LogFile. Cancelling ctx interrupts it, which saves a checkpoint;
// it gets two minutes to do so.
func SpawnIndex(ctx context.Context, dir string, r Run) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("sweep: find this binary to run `pcl sweep run`: %w", err)
	}
	logPath := LogFile(dir, r)
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, exe, "sweep", "run", "--dir", dir, "--index", strconv.Itoa(r.Index))
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "OPENBLAS_NUM_THREADS=1")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 2 * time.Minute
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w (output in %s%s)", r.ID, err, logPath, lastLine(logPath))
	}
	return nil
}

// lastLine returns ": " and the last non-empty line of the file at path, or "".
func lastLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return ": " + l
	}
	return ""
}

// RunAll brings every run of the sweep in dir to its budget, n at a time: in this process with
// *opts, or each in a SpawnIndex subprocess when opts is nil. It writes a line per
// run to w saying what it found and does (finished runs are left alone, partial ones resumed), and
// returns every failure joined; nothing new starts once ctx is cancelled.
func RunAll(ctx context.Context, dir string, n int, opts *RunOptions, w io.Writer) error {
	m, err := Load(dir)
	if err != nil {
		return err
	}
	pending, err := Pending(dir, m)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "sweep: %d of %d runs to do, %d at a time\n", len(pending), len(m.Runs), n)
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, format, args...)
	}
	for _, r := range m.Runs {
		if !slices.Contains(pending, r.Index) {
			say("sweep: run %d (%s) is finished: left alone\n", r.Index, r.ID)
		}
	}
	return Local(ctx, n, pending, func(ctx context.Context, i int) error {
		r := m.Runs[i]
		if runstore.Dir(RunDir(dir, r)).InUse() {
			// Another sweep process (or a pcl train) is training it: not a failure, and not ours.
			say("sweep: run %d (%s) is being trained by another process: left to it\n", i, r.ID)
			return nil
		}
		st, err := Inspect(dir, r)
		if err != nil {
			return err
		}
		what := "train"
		if st.State == Partial {
			what = fmt.Sprintf("resume from iteration %d", st.Iteration)
		}
		if opts != nil {
			say("sweep: run %d (%s): %s -> %s\n", i, r.ID, what, RunDir(dir, r))
			_, err := RunIndex(ctx, dir, i, *opts)
			return err
		}
		say("sweep: run %d (%s): %s -> %s (output in %s)\n", i, r.ID, what, RunDir(dir, r), LogFile(dir, r))
		return SpawnIndex(ctx, dir, r)
	})
}
