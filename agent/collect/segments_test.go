package collect_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/collect"
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/model/mlp"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// newCopySampler builds a collector over n copies of Go-native Copy (base 2: a Discrete(3)
// observation, one-hot encoded, and 8 actions), whose episodes end at random points.
func newCopySampler(t *testing.T, n int, seed int64) (*collect.Collector[float32], *mlp.Learner, envs.VecEnv) {
	t.Helper()
	env, err := registry.MakeVec("Copy-v0", n, map[string]any{"base": 2, "autoreset": "disabled"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Close() })
	enc, err := mlp.NewEncoder(env.ObservationSpace())
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Net, cfg.Algo, cfg.Form, cfg.MLPHidden, cfg.Rollout, cfg.Gamma = config.NetMLP, config.AlgoSparse, config.FormSeparate, 8, 3, 0.9
	cfg.Alpha, cfg.Seed = 0.3, seed
	l, err := mlp.NewLearner(cfg, enc.Dim(), int(env.ActionSpace().(envs.Discrete).N), tensor.GonumEngine())
	if err != nil {
		t.Fatal(err)
	}
	s, err := collect.New(env, enc, l.Model, collect.Options{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return s, l, env
}

// Every step lands in exactly one segment; a segment that ended its episode says how, the others
// are the one cut piece per copy at the end of the iteration; the next iteration of a cut copy
// continues from its last observation (the learner's loss on them is checked in agent/model/mlp).
func TestCollectCutsSegmentsAtEpisodeBoundaries(t *testing.T) {
	const n, steps = 4, 25
	s, l, _ := newCopySampler(t, n, 3)
	rng := rand.New(rand.NewPCG(1, 2))
	var carried []float32
	for it := range 3 {
		col, err := s.Segments(context.Background(), rng, steps, it)
		if err != nil {
			t.Fatal(err)
		}
		if col.EnvSteps != n*steps {
			t.Fatalf("iteration %d: %d env steps, want %d", it, col.EnvSteps, n*steps)
		}
		total, cut, ended := 0, 0, 0
		for _, seg := range col.Trajectories {
			if err := seg.Validate(l.Model.Dim); err != nil {
				t.Fatal(err)
			}
			total += seg.Len()
			if seg.Terminated || seg.Truncated {
				ended++
			} else {
				cut++
			}
		}
		if total != n*steps {
			t.Errorf("iteration %d: segments hold %d steps, want %d", it, total, n*steps)
		}
		if ended != len(col.Returns) || ended == 0 {
			t.Errorf("iteration %d: %d ended segments, %d completed episodes (want equal and > 0)", it, ended, len(col.Returns))
		}
		if cut > n {
			t.Errorf("iteration %d: %d cut segments for %d copies", it, cut, n)
		}
		if it > 0 && carried != nil {
			// The first cut copy's next segment starts where its last one stopped.
			found := false
			for _, seg := range col.Trajectories {
				if equalFloats(seg.Obs[:l.Model.Dim], carried) && seg.Iteration == it {
					found = true
				}
			}
			if !found {
				t.Errorf("iteration %d: no segment continues from the last observation of a cut piece", it)
			}
		}
		carried = nil
		for _, seg := range col.Trajectories {
			if !seg.Terminated && !seg.Truncated {
				carried = append([]float32(nil), seg.Obs[len(seg.Obs)-l.Model.Dim:]...)
				break
			}
		}
	}
	if mp, sup := s.Window(); !(mp > 0 && mp <= 1 && sup >= 1) {
		t.Errorf("statistics window: max-prob %v, support %v", mp, sup)
	}
}

// Two collectors with the same seeds collect the same segments: resets are seeded from the run seed,
// the iteration, the copy and the step.
func TestCollectIsAFunctionOfTheSeeds(t *testing.T) {
	run := func() []*mlp.Segment {
		c, _, _ := newCopySampler(t, 3, 5)
		var all []*mlp.Segment
		for it := range 2 {
			col, err := c.Segments(context.Background(), rand.New(rand.NewPCG(uint64(it), 1)), 30, it)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, col.Trajectories...)
		}
		return all
	}
	a, b := run(), run()
	if len(a) != len(b) {
		t.Fatalf("%d and %d segments", len(a), len(b))
	}
	for i := range a {
		if !equalFloats(a[i].Obs, b[i].Obs) || len(a[i].Actions) != len(b[i].Actions) || a[i].Terminated != b[i].Terminated {
			t.Fatalf("segment %d differs", i)
		}
	}
}

func TestCollectorRejectsMismatchedEnvs(t *testing.T) {
	_, l, _ := newCopySampler(t, 1, 1)
	next, err := registry.MakeVec("Copy-v0", 1, map[string]any{"base": 2})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	enc, _ := mlp.NewEncoder(next.ObservationSpace())
	if _, err := collect.New(next, enc, l.Model, collect.Options{Seed: 1}); err == nil {
		t.Error("an env with next-step autoreset: no error")
	}
	bigger, err := registry.MakeVec("Copy-v0", 1, map[string]any{"base": 3, "autoreset": "disabled"})
	if err != nil {
		t.Fatal(err)
	}
	defer bigger.Close()
	enc, _ = mlp.NewEncoder(bigger.ObservationSpace())
	if _, err := collect.New(bigger, enc, l.Model, collect.Options{Seed: 1}); err == nil {
		t.Error("an env with another action count: no error")
	}
}

func equalFloats(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
