package sweep

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/train"
)

// State is how far a run has got.
type State int

// Run states.
const (
	Missing  State = iota // nothing on disk
	Started               // a directory without a checkpoint (killed before its first one)
	Partial               // a checkpoint short of the budget
	Finished              // the budget is done (or the run stopped at its threshold, when asked to)
)

func (s State) String() string {
	return [...]string{"missing", "started", "partial", "finished"}[s]
}

// Status is a run's state on disk.
type Status struct {
	State     State
	Iteration int // iterations completed (checkpointed, or in the metrics of a results copy)
}

// Inspect reads the state of run r of the sweep in dir. A run directory whose config differs from
// r's (apart from the iteration budget) is an error naming the fields. A run taken beyond the
// manifest's budget (resumed with a larger --iters, or the same run continued by a longer sweep)
// is finished at that budget once its checkpoint has passed it: Status.Iteration is then the
// budget, so a report reads the run's first budget iterations, as this sweep planned them.
func Inspect(dir string, r Run) (Status, error) {
	rd := RunDir(dir, r)
	saved, err := runstore.Dir(rd).Config()
	if errors.Is(err, fs.ErrNotExist) {
		if runstore.Dir(rd).HasCheckpoint() {
			return Status{}, fmt.Errorf("sweep: run %d (%s): %s has a checkpoint but no %s", r.Index, r.ID, rd, runstore.ConfigFile)
		}
		return Status{State: Missing}, nil
	}
	if err != nil {
		return Status{}, fmt.Errorf("sweep: run %d (%s): %w", r.Index, r.ID, err)
	}
	want := r.Config
	beyond := saved.Iters > want.Iters
	saved.Iters = want.Iters
	if d := config.Diff(saved, train.ResolveNet(want)); d != nil {
		return Status{}, fmt.Errorf("sweep: run %d (%s): %s holds a run with another config than the manifest's (%s); it is left alone: "+
			"plan the changed sweep into another directory, or move that run away yourself", r.Index, r.ID, rd, strings.Join(d, ", "))
	}
	if !runstore.Dir(rd).HasCheckpoint() {
		return withoutCheckpoint(rd, want)
	}
	meta, err := runstore.Dir(rd).Meta()
	if err != nil {
		return Status{}, fmt.Errorf("sweep: run %d (%s): %w", r.Index, r.ID, err)
	}
	st := Status{State: Partial, Iteration: meta.Iteration}
	if meta.Iteration >= want.Iters {
		st.State = Finished
		if beyond {
			st.Iteration = want.Iters
		}
	} else if want.StopAtThreshold {
		rows, err := runstore.Dir(rd).Metrics()
		if err != nil {
			return Status{}, fmt.Errorf("sweep: run %d (%s): %w", r.Index, r.ID, err)
		}
		if _, ok := runstore.FirstReach(rows, want.RewardThreshold); ok {
			st.State = Finished
		}
	}
	return st, nil
}

// withoutCheckpoint reads a run directory that has a config but no checkpoint. Usually the run
// was killed before its first checkpoint (Started: it starts over). But a run's results copied
// without the checkpoint, as docs/results keeps them, hold metrics through the budget: such a
// copy is Finished, so that a sweep replanned on a fresh machine reports it and never trains
// it again.
func withoutCheckpoint(rd string, want config.Config) (Status, error) {
	rows, err := runstore.Dir(rd).Metrics()
	if err != nil || len(rows) == 0 {
		// No metrics, or a file cut mid-line by the kill: the run starts over, as it always has.
		return Status{State: Started}, nil
	}
	done := rows[len(rows)-1].Iteration + 1
	if done >= want.Iters {
		return Status{State: Finished, Iteration: want.Iters}, nil
	}
	if want.StopAtThreshold {
		if _, ok := runstore.FirstReach(rows, want.RewardThreshold); ok {
			return Status{State: Finished, Iteration: done}, nil
		}
	}
	return Status{State: Started}, nil
}

// WaitForRun waits, for up to wait, while another process holds the lock of run i's directory,
// and says so once on log. A process that trained the run may still be saving it when its
// successor starts: Slurm starts a requeued array task while the task it replaces, interrupted,
// writes its checkpoint. Run it before RunIndex, which reads the run's state first. It returns
// ctx's error when ctx ends; at the deadline it returns nil, and RunIndex then refuses the run
// (runstore.ErrRunInUse) as it would have at once.
func WaitForRun(ctx context.Context, dir string, i int, wait time.Duration, log *slog.Logger) error {
	m, err := Load(dir)
	if err != nil {
		return err
	}
	if i < 0 || i >= len(m.Runs) {
		return fmt.Errorf("sweep: run index %d is out of range: the manifest has %d runs, indices 0..%d", i, len(m.Runs), len(m.Runs)-1)
	}
	run := runstore.Dir(RunDir(dir, m.Runs[i]))
	if !run.InUse() {
		return nil
	}
	log.Info("another process holds the run's lock; waiting for it", "run", m.Runs[i].ID, "wait", wait)
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	poll := time.NewTicker(200 * time.Millisecond)
	defer poll.Stop()
	for run.InUse() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("sweep: run %d (%s): waiting for its lock: %w", i, m.Runs[i].ID, ctx.Err())
		case <-deadline.C:
			return nil
		case <-poll.C:
		}
	}
	return nil
}

// RunOptions are passed through to train.Run (Dir and Resume are set here).
type RunOptions = train.Options

// RunIndex brings run i of the sweep in dir to its budget: a missing run is trained, a started or
// partial one resumed (a started one, killed before its first checkpoint, starts over), a finished
// one left alone. It reports the state it found.
func RunIndex(ctx context.Context, dir string, i int, opts RunOptions) (Status, error) {
	m, err := Load(dir)
	if err != nil {
		return Status{}, err
	}
	if i < 0 || i >= len(m.Runs) {
		return Status{}, fmt.Errorf("sweep: run index %d is out of range: the manifest has %d runs, indices 0..%d", i, len(m.Runs), len(m.Runs)-1)
	}
	r := m.Runs[i]
	st, err := Inspect(dir, r)
	if err != nil {
		return st, err
	}
	if st.State == Finished {
		return st, nil
	}
	opts.Dir, opts.Resume = RunDir(dir, r), st.State == Partial
	sum, err := train.Run(ctx, r.Config, opts)
	if err != nil {
		return st, fmt.Errorf("sweep: run %d (%s): %w", i, r.ID, err)
	}
	if sum.Interrupted {
		return st, fmt.Errorf("sweep: run %d (%s) interrupted at iteration %d; run it again to resume: %w", i, r.ID, sum.Iterations, context.Canceled)
	}
	return st, nil
}
