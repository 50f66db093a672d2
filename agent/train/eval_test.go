package train

import (
	"context"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// EvaluateLengths plays every curriculum level of Copy from its start to the cap: the targets
// (the inputs, for Copy) have min_length + {0, 1, 2} symbols at each level.
func TestEvaluateLengthsCoversEveryLevel(t *testing.T) {
	cfg := smallCopyConfig(config.AlgoSparse, 0.05)
	cfg.BatchSize, cfg.Hidden, cfg.EvalEvery, cfg.Iters = 4, 8, 0, 1
	dir := t.TempDir()
	reg := registry.Default()
	if _, err := Run(context.Background(), cfg, Options{Dir: dir, Registry: reg, Engine: tensor.GonumEngine()}); err != nil {
		t.Fatal(err)
	}
	const n = 6
	levels, meta, err := EvaluateLengths(context.Background(), dir, reg, tensor.GonumEngine(), n, 7)
	if err != nil {
		t.Fatal(err)
	}
	start := algorithmic.Copy.StartMinLength()
	if meta.Iteration != 1 || len(levels) != algorithmic.MaxMinLength-start+1 {
		t.Fatalf("iteration %d, %d levels, want 1 and %d", meta.Iteration, len(levels), algorithmic.MaxMinLength-start+1)
	}
	for i, l := range levels {
		m := float64(start + i)
		if l.MinLength != start+i || l.Episodes != n || l.MeanTarget < m || l.MeanTarget > m+2 || l.Solved < 0 || l.Solved > 1 || l.MeanReward > l.MeanTarget {
			t.Errorf("level %d: %+v", start+i, l)
		}
	}
}
