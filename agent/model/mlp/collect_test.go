package mlp

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/collect"
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// newCopySampler builds a collector over n copies of Go-native Copy (base 2: a Discrete(3)
// observation, one-hot encoded, and 8 actions), whose episodes end at random points.
func newCopySampler(t *testing.T, n int, seed int64) (*collect.Collector[float32], *Learner, envs.VecEnv) {
	t.Helper()
	env, err := registry.MakeVec("Copy-v0", n, map[string]any{"base": 2, "autoreset": "disabled"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Close() })
	enc, err := NewEncoder(env.ObservationSpace())
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(config.AlgoSparse, config.FormSeparate, seed)
	l, err := NewLearner(cfg, enc.Dim(), int(env.ActionSpace().(envs.Discrete).N), tensor.GonumEngine())
	if err != nil {
		t.Fatal(err)
	}
	s, err := collect.New(env, enc, l.Model, collect.Options{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return s, l, env
}

// The loss of the segments a collector cut equals the slow recomputation: episodes that start in
// the middle of an iteration start their own paths, and cut pieces bootstrap from their last V.
func TestLossOfCollectedSegments(t *testing.T) {
	s, l, _ := newCopySampler(t, 4, 3)
	rng := rand.New(rand.NewPCG(1, 2))
	for it := range 3 {
		col, err := s.Segments(context.Background(), rng, 25, it)
		if err != nil {
			t.Fatal(err)
		}
		info, err := l.Loss(col.Trajectories, false)
		if err != nil {
			t.Fatal(err)
		}
		if want := slowLoss(t, l, col.Trajectories); math.Abs(info.Loss-want) > 1e-4*(1+want) {
			t.Errorf("iteration %d: loss %v, slow recomputation %v", it, info.Loss, want)
		}
	}
}
