package train

import (
	"context"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
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

// The headline of pcl eval is EvaluateTrained: the checkpoint's trained level, measured exactly as
// EvaluateLengths measures that level's row.
func TestEvaluateTrainedIsTheTrainedLevelsRow(t *testing.T) {
	cfg := smallCopyConfig(config.AlgoSparse, 0.05)
	cfg.BatchSize, cfg.Hidden, cfg.EvalEvery, cfg.Iters = 4, 8, 0, 2
	dir := t.TempDir()
	reg := registry.Default()
	if _, err := Run(context.Background(), cfg, Options{Dir: dir, Registry: reg, Engine: tensor.GonumEngine()}); err != nil {
		t.Fatal(err)
	}
	const n = 5
	got, meta, err := EvaluateTrained(context.Background(), dir, reg, tensor.GonumEngine(), n, 3)
	if err != nil {
		t.Fatal(err)
	}
	level, ok := meta.TrainedLevel()
	if !ok || got.MinLength != level {
		t.Fatalf("evaluated min_length %d, trained level %d (ok %v)", got.MinLength, level, ok)
	}
	levels, _, err := EvaluateLengths(context.Background(), dir, reg, tensor.GonumEngine(), n, 3)
	if err != nil {
		t.Fatal(err)
	}
	row := levels[level-levels[0].MinLength]
	if row != got {
		t.Fatalf("trained-level result %+v, the per-length row %+v", got, row)
	}
}

func TestTrainedLevel(t *testing.T) {
	cur := func(levels ...int) *algorithmic.VecCurriculumState {
		s := &algorithmic.VecCurriculumState{}
		for _, l := range levels {
			s.Curricula = append(s.Curricula, algorithmic.CurriculumState{MinLength: l})
		}
		return s
	}
	for _, tc := range []struct {
		name  string
		meta  runstore.Meta
		level int
		ok    bool
	}{
		{"no curriculum", runstore.Meta{}, 0, false},
		{"empty", runstore.Meta{TrainCurriculum: cur()}, 0, false},
		{"shared", runstore.Meta{TrainCurriculum: cur(17)}, 17, true},
		{"per copy: the lowest", runstore.Meta{TrainCurriculum: cur(9, 4, 30)}, 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			level, ok := tc.meta.TrainedLevel()
			if level != tc.level || ok != tc.ok {
				t.Fatalf("got %d %v, want %d %v", level, ok, tc.level, tc.ok)
			}
		})
	}
}

func TestLengthResultFraction(t *testing.T) {
	for _, tc := range []struct {
		r    LengthResult
		want float64
	}{
		{LengthResult{MeanReward: 15, MeanTarget: 30}, 0.5},
		{LengthResult{MeanReward: -1, MeanTarget: 4}, -0.25},
		{LengthResult{MeanReward: 3}, 0},
	} {
		if got := tc.r.Fraction(); got != tc.want {
			t.Errorf("%+v: fraction %v, want %v", tc.r, got, tc.want)
		}
	}
}
