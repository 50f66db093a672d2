package train

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// recorder is an Observer that writes down the calls it gets, and fails the one named fail.
type recorder struct {
	calls []string
	fail  string
}

func (r *recorder) note(call string) error {
	r.calls = append(r.calls, call)
	if call == r.fail {
		return errors.New("observer failure")
	}
	return nil
}

func (r *recorder) Start(_ context.Context, run Watched) error {
	return r.note(fmt.Sprintf("start replay=%v", run.Replay != nil))
}
func (r *recorder) Sampled(s Sample) error { return r.note(fmt.Sprintf("sampled %d", s.Iteration)) }
func (r *recorder) BeforeStep(s Step) error {
	return r.note(fmt.Sprintf("before %d/%d", s.Iteration, s.Kind))
}
func (r *recorder) AfterStep(s Step, _ pcl.StepInfo, _ time.Duration) error {
	return r.note(fmt.Sprintf("after %d/%d", s.Iteration, s.Kind))
}
func (r *recorder) Trained(it int) error { return r.note(fmt.Sprintf("trained %d", it)) }

func smallEpisodesConfig() config.Config {
	cfg := config.Default()
	cfg.Base, cfg.BatchSize, cfg.Hidden, cfg.Iters, cfg.EvalEvery, cfg.EvalEpisodes = 3, 8, 8, 2, 1, 4
	return cfg
}

// An observer is called in the order of an iteration and changes nothing the run computes.
func TestObserverOrderAndNoEffect(t *testing.T) {
	cfg := smallEpisodesConfig()
	quiet := slog.New(slog.DiscardHandler)
	plain, err := Run(context.Background(), cfg, Options{Registry: registry.Default(), Dir: t.TempDir(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	watched, err := Run(context.Background(), cfg, Options{Registry: registry.Default(), Dir: t.TempDir(), Logger: quiet, Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	sameRows(t, "observed run", plain.Rows, watched.Rows)
	want := []string{"start replay=true",
		"sampled 0", "before 0/0", "after 0/0", "before 0/1", "after 0/1", "trained 0",
		"sampled 1", "before 1/0", "after 1/0", "before 1/1", "after 1/1", "trained 1"}
	if !slices.Equal(rec.calls, want) {
		t.Errorf("calls %q, want %q", rec.calls, want)
	}
}

// An observer's error stops the run as a failure of the stage it was called in.
func TestObserverErrorStopsRun(t *testing.T) {
	for _, c := range []struct{ fail, stage string }{
		{"start replay=true", "observer: observer failure"},
		{"sampled 1", "stopped at iteration 1, sampling: observer: observer failure"},
		{"before 0/1", "stopped at iteration 0, replay step: observer: observer failure"},
		{"trained 0", "stopped at iteration 0, observer: observer failure"},
	} {
		rec := &recorder{fail: c.fail}
		_, err := Run(context.Background(), smallEpisodesConfig(), Options{Registry: registry.Default(), Dir: t.TempDir(),
			Logger: slog.New(slog.DiscardHandler), Observer: rec})
		if err == nil || !strings.Contains(err.Error(), c.stage) {
			t.Errorf("observer failing at %q: %v, want an error containing %q", c.fail, err, c.stage)
		}
	}
}

// A run without a directory trains in a temporary one and removes it; the mlp family refuses an
// observer.
func TestRunWithoutDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	sum, err := Run(context.Background(), smallEpisodesConfig(), Options{Registry: registry.Default(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil || sum.Iterations != 2 {
		t.Fatalf("run without a directory: %d iterations, %v", sum.Iterations, err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	if stray, _ := filepath.Glob(runstore.CheckpointFile); len(stray) > 0 {
		t.Errorf("a %s was written in the working directory", runstore.CheckpointFile)
	}
	_, err = Run(context.Background(), smallStepsConfig(), Options{Registry: registry.Default(), Logger: slog.New(slog.DiscardHandler), Observer: &recorder{}})
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("mlp run with an observer: %v, want ErrUnsupported", err)
	}
	if _, err := Run(context.Background(), smallEpisodesConfig(), Options{Registry: registry.Default(), Resume: true}); err == nil {
		t.Error("resume without a directory accepted")
	}
}
