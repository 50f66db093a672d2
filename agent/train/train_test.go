package train

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// smallCopyConfig is Copy with base 2 (|A| = 8) at a batch size small enough for CI.
func smallCopyConfig(algo string, alpha float64) config.Config {
	c := config.Default()
	c.Env, c.Base, c.Algo, c.Alpha = "Copy-v0", 2, algo, alpha
	c.BatchSize, c.Hidden, c.LearningRate = 32, 32, 0.01
	c.EvalEvery, c.EvalEpisodes, c.CheckpointEvery = 5, 32, 20
	c.Iters, c.Seed = 300, 1
	c.RewardThreshold, c.StopAtThreshold = 5, true
	return c
}

// A fixed-seed run of each algorithm on Copy base 2 reaches the reward threshold (a greedy mean
// reward of 5: perfect copies after the curriculum has grown) within the iteration budget.
func TestCopyBase2ReachesThreshold(t *testing.T) {
	if testing.Short() {
		t.Skip("training run")
	}
	cases := []struct {
		algo  string
		alpha float64
	}{{config.AlgoSparse, 0.05}, {config.AlgoSoft, 0.025}}
	for _, tc := range cases {
		cfg := smallCopyConfig(tc.algo, tc.alpha)
		dir := t.TempDir()
		sum, err := Run(context.Background(), cfg, Options{Dir: dir, Registry: registry.Default(), Engine: tensor.GonumEngine()})
		if err != nil {
			t.Fatal(err)
		}
		r, ok := FirstReach(sum.Rows, cfg.RewardThreshold)
		t.Logf("%s: %d iterations, %.3fs/iter, reached=%v at %d (greedy %.2f, curriculum %d)", tc.algo, sum.Iterations, sum.SecondsPerIt, ok, r.Iteration, r.GreedyReward, r.Curriculum)
		if !ok {
			t.Errorf("%s did not reach greedy reward %v in %d iterations (last greedy %v)", tc.algo, cfg.RewardThreshold, cfg.Iters, sum.LastGreedy)
		}
		for _, f := range []string{ConfigFile, MetricsFile, CheckpointFile, RewardPlot, SparsityPlot, MaxProbPlot} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("run dir lacks %s: %v", f, err)
			}
		}
	}
}

// Stopping after 2 iterations and resuming gives the same losses as 4 uninterrupted iterations
// (parameters and Adam state come from the checkpoint; batches are seeded per iteration). Replay
// and greedy evaluation are off: the replay buffer is not checkpointed.
func TestResumeContinuesExactly(t *testing.T) {
	cfg := smallCopyConfig(config.AlgoSparse, 0.05)
	cfg.Replay, cfg.EvalEvery, cfg.StopAtThreshold, cfg.Iters, cfg.BatchSize = false, 0, false, 4, 8
	reg := registry.Default()
	full, err := Run(context.Background(), cfg, Options{Dir: t.TempDir(), Registry: reg, Engine: tensor.GonumEngine()})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	half := cfg
	half.Iters = 2
	if _, err := Run(context.Background(), half, Options{Dir: dir, Registry: reg, Engine: tensor.GonumEngine()}); err != nil {
		t.Fatal(err)
	}
	resumed, err := Run(context.Background(), cfg, Options{Dir: dir, Resume: true, Registry: reg, Engine: tensor.GonumEngine()})
	if err != nil {
		t.Fatal(err)
	}
	if len(resumed.Rows) != 4 || len(full.Rows) != 4 {
		t.Fatalf("rows: resumed %d, full %d", len(resumed.Rows), len(full.Rows))
	}
	for i := range full.Rows {
		if full.Rows[i].Loss != resumed.Rows[i].Loss || full.Rows[i].MeanReward != resumed.Rows[i].MeanReward {
			t.Errorf("iteration %d: full loss %v reward %v, resumed loss %v reward %v", i, full.Rows[i].Loss, full.Rows[i].MeanReward, resumed.Rows[i].Loss, resumed.Rows[i].MeanReward)
		}
	}
	// A cancelled context saves and stops cleanly.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sum, err := Run(ctx, cfg, Options{Dir: t.TempDir(), Registry: reg, Engine: tensor.GonumEngine()})
	if err != nil || !sum.Interrupted {
		t.Fatalf("cancelled run: err %v, interrupted %v", err, sum.Interrupted)
	}
}
