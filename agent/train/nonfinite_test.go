package train

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/model/lstm"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// A run whose config.json is edited to an absurd value and resumed goes non-finite on the real
// code path: a huge alpha makes the per-step consistency terms (alpha times a log or Tsallis term)
// so large that C^2 overflows float64 (an Inf loss), a huge learning rate makes Adam's first step
// overflow the float32 parameters. The run stops
// with an error naming the iteration and ErrNonFinite, writes nothing, and the checkpoint on disk is
// the last good one: byte-identical, loadable, and resumable (once the config is repaired) into
// exactly the uninterrupted run.
func TestNonFiniteStopsAndKeepsLastCheckpoint(t *testing.T) {
	cfg := smallCopyConfig(config.AlgoSparse, 0.05)
	cfg.BatchSize, cfg.Hidden, cfg.EvalEvery, cfg.EvalEpisodes, cfg.CheckpointEvery, cfg.StopAtThreshold, cfg.Iters = 8, 16, 2, 4, 3, false, 6
	reg := registry.Default()
	eng := tensor.GonumEngine()
	full, err := Run(context.Background(), cfg, Options{Dir: t.TempDir(), Registry: reg, Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		breakCfg func(c *config.Config)
	}{
		{"alpha 1e300", func(c *config.Config) { c.Alpha = 1e300 }},
		{"learning rate 1e39", func(c *config.Config) { c.LearningRate = 1e39 }},
	}
	for _, tc := range tests {
		dir := t.TempDir()
		good := cfg
		good.Iters = 3
		if _, err := Run(context.Background(), good, Options{Dir: dir, Registry: reg, Engine: eng}); err != nil {
			t.Fatal(err)
		}
		before := snapshotFiles(t, dir)
		bad := cfg
		tc.breakCfg(&bad)
		if err := bad.WriteFile(filepath.Join(dir, runstore.ConfigFile)); err != nil {
			t.Fatal(err)
		}
		_, err := Run(context.Background(), cfg, Options{Dir: dir, Resume: true, Registry: reg, Engine: eng})
		if !errors.Is(err, ErrNonFinite) || !errors.Is(err, pcl.ErrNonFinite) {
			t.Fatalf("%s: error %v, want one wrapping ErrNonFinite", tc.name, err)
		}
		t.Logf("%s: %v", tc.name, err)
		for _, want := range []string{"stopped at iteration 3", "the last good checkpoint (iteration 3) is kept in " + dir} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not say %q", tc.name, err, want)
			}
		}
		after := snapshotFiles(t, dir)
		for _, f := range []string{runstore.CheckpointFile, runstore.MetricsFile, runstore.ReplayFileName(3)} {
			if !bytes.Equal(before[f], after[f]) {
				t.Errorf("%s: %s changed by the failed run", tc.name, f)
			}
		}
		// Loadable: a learner built from the run's config takes the checkpoint.
		env, err := MakeEnv(reg, bad, 1)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := lstm.SpecOf(env)
		if err != nil {
			t.Fatal(err)
		}
		l, err := lstm.NewLearner(bad, spec, eng)
		if err != nil {
			t.Fatal(err)
		}
		meta, err := LoadCheckpoint(dir, l)
		if err != nil || meta.Iteration != 3 {
			t.Fatalf("%s: checkpoint after the failure: iteration %d, %v", tc.name, meta.Iteration, err)
		}
		for _, p := range l.Params() {
			if i := p.Value.FirstNonFinite(); i >= 0 {
				t.Fatalf("%s: saved parameter %s[%d] is not finite", tc.name, p.Name, i)
			}
		}
		// Resumable: with the config repaired the run ends as if nothing had happened.
		if err := cfg.WriteFile(filepath.Join(dir, runstore.ConfigFile)); err != nil {
			t.Fatal(err)
		}
		resumed, err := Run(context.Background(), cfg, Options{Dir: dir, Resume: true, Registry: reg, Engine: eng})
		if err != nil {
			t.Fatalf("%s: resume after repair: %v", tc.name, err)
		}
		sameRows(t, tc.name+", repaired and resumed", full.Rows, resumed.Rows)
	}
}

// A run that goes non-finite before its first checkpoint says that none was written.
func TestNonFiniteBeforeAnyCheckpoint(t *testing.T) {
	cfg := smallCopyConfig(config.AlgoSoft, 1e300)
	cfg.BatchSize, cfg.Hidden, cfg.EvalEvery, cfg.Iters = 4, 8, 0, 2
	dir := t.TempDir()
	_, err := Run(context.Background(), cfg, Options{Dir: dir, Registry: registry.Default(), Engine: tensor.GonumEngine()})
	if !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "stopped at iteration 0") || !strings.Contains(err.Error(), "no checkpoint was written") {
		t.Fatalf("error %v", err)
	}
	if runstore.Dir(dir).HasCheckpoint() {
		t.Error("a checkpoint was written for non-finite parameters")
	}
}

func snapshotFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if out[e.Name()], err = os.ReadFile(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
