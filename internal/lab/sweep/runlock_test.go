package sweep

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/runstore"
)

// pauseAt is a progress writer that, at its n-th progress line (iteration), says so on reached
// and blocks until release is closed: a run held in mid-training, its directory locked.
type pauseAt struct {
	n       int
	reached chan struct{}
	release chan struct{}
	once    sync.Once
}

func (p *pauseAt) Write(b []byte) (int, error) {
	p.n -= bytes.Count(b, []byte("\riter "))
	if p.n <= 0 {
		p.once.Do(func() {
			close(p.reached)
			<-p.release
		})
	}
	return len(b), nil
}

// TestRunInUseByAnother holds run 0 of a sweep in mid-training and checks that a second writer of
// its directory is refused with ErrRunInUse and changes nothing, that a sweep leaves the run to
// its trainer and does the others, and that the lock goes with the run.
func TestRunInUseByAnother(t *testing.T) {
	dir := t.TempDir()
	m := planTiny(t, dir)
	run0 := RunDir(dir, m.Runs[0])
	if runstore.Dir(run0).InUse() {
		t.Fatal("a run directory that does not exist is in use")
	}

	pause := &pauseAt{n: 3, reached: make(chan struct{}), release: make(chan struct{})}
	first := make(chan error, 1)
	go func() {
		opts := quiet()
		opts.Progress.W = pause
		_, err := RunIndex(context.Background(), dir, 0, opts)
		first <- err
	}()
	<-pause.reached
	if !runstore.Dir(run0).InUse() {
		t.Fatal("the directory of a run in mid-training is not in use")
	}

	before := snapshot(t, run0)
	_, err := RunIndex(context.Background(), dir, 0, quiet())
	if !errors.Is(err, runstore.ErrRunInUse) {
		t.Errorf("a second writer of the run: %v, want ErrRunInUse", err)
	}
	if snapshot(t, run0) != before {
		t.Error("the refused writer changed the run's directory")
	}

	var out strings.Builder
	opts := quiet()
	if err := RunAll(context.Background(), dir, 2, &opts, &out); err != nil {
		t.Errorf("sweep beside the run: %v", err)
	}
	if want := "run 0 (" + m.Runs[0].ID + ") is being trained by another process: left to it"; !strings.Contains(out.String(), want) {
		t.Errorf("sweep output lacks %q:\n%s", want, out.String())
	}
	if st, err := Inspect(dir, m.Runs[1]); err != nil || st.State != Finished {
		t.Errorf("run 1 after the sweep: %+v, %v; want finished", st, err)
	}

	close(pause.release)
	if err := <-first; err != nil {
		t.Fatalf("the held run: %v", err)
	}
	if st, err := Inspect(dir, m.Runs[0]); err != nil || st.State != Finished {
		t.Errorf("run 0 after its trainer: %+v, %v; want finished", st, err)
	}
	if runstore.Dir(run0).InUse() {
		t.Error("the run's lock outlived it")
	}
}

// WaitForRun waits while another process holds a run's lock, as a requeued Slurm task must while
// the task it replaces saves: released within the wait, the run then trains to its budget; held
// past it, WaitForRun gives up and RunIndex refuses the run as before; a cancelled context ends
// the wait with its error.
func TestWaitForRun(t *testing.T) {
	dir := t.TempDir()
	m := planTiny(t, dir)
	run0 := RunDir(dir, m.Runs[0])
	if err := os.MkdirAll(run0, 0o755); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	if err := WaitForRun(context.Background(), dir, 0, time.Minute, log); err != nil {
		t.Fatalf("a free run: %v", err)
	}

	held, err := runstore.Dir(run0).Lock()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := WaitForRun(context.Background(), dir, 0, 300*time.Millisecond, log); err != nil {
		t.Fatalf("held past the wait: %v, want nil (RunIndex refuses)", err)
	}
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Errorf("gave up after %v, before the wait of 300ms", waited)
	}
	if _, err := RunIndex(context.Background(), dir, 0, quiet()); !errors.Is(err, runstore.ErrRunInUse) {
		t.Errorf("RunIndex on the held run: %v, want ErrRunInUse", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := WaitForRun(ctx, dir, 0, time.Minute, log); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait: %v, want context.Canceled", err)
	}

	go func() {
		time.Sleep(300 * time.Millisecond)
		held.Close()
	}()
	if err := WaitForRun(context.Background(), dir, 0, time.Minute, log); err != nil {
		t.Fatalf("released during the wait: %v", err)
	}
	if st, err := RunIndex(context.Background(), dir, 0, quiet()); err != nil || st.State == Finished {
		t.Fatalf("after the wait: %+v, %v; want the run trained", st, err)
	}
	if st, err := Inspect(dir, m.Runs[0]); err != nil || st.State != Finished {
		t.Errorf("run 0: %+v, %v; want finished", st, err)
	}
	if err := WaitForRun(context.Background(), dir, len(m.Runs), time.Minute, log); err == nil {
		t.Error("an index past the manifest was accepted")
	}
}
