package replay_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/collect"
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/internal/noiseenv"
	"github.com/sparsepcl/sparsepcl/agent/memory"
	"github.com/sparsepcl/sparsepcl/agent/model/mlp"
	"github.com/sparsepcl/sparsepcl/agent/replay"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs"
)

// The long-episode replay holds what memory.ReplayBytesPerStep says per stored step, measured on
// the live heap over 200,000 steps collected as a run collects them (HalfCheetah's 17 values,
// 100 steps per iteration, episodes truncated at 1,000 steps so that returns to go are filled).
func TestReplayBytesPerStep(t *testing.T) {
	if testing.Short() {
		t.Skip("collects 200,000 steps")
	}
	const dim, k = 17, 27
	l := sparseLearner(t, dim, k)
	env, err := envs.SyncVec(func() (envs.Env, error) { e := noiseenv.New(k, dim, 1); e.Limit = 1000; return e, nil }, 1, envs.AutoresetDisabled)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := mlp.NewEncoder(env.ObservationSpace())
	if err != nil {
		t.Fatal(err)
	}
	c, err := collect.New(env, enc, l.Model, collect.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	buf, err := replay.New[float32](replay.Steps(1_000_000), replay.Recency{Weight: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	before := settledHeap()
	for it := range 2000 {
		b, err := c.Segments(context.Background(), rng, 100, it)
		if err != nil {
			t.Fatal(err)
		}
		collect.FillReturnsToGo(b.Ended, 0.99)
		for _, s := range b.Trajectories {
			if err := buf.Add(rng, s, float64(s.Iteration)); err != nil {
				t.Fatal(err)
			}
		}
	}
	per := float64(settledHeap()-before) / float64(buf.Steps())
	want := float64(memory.ReplayBytesPerStep(dim))
	t.Logf("%d steps stored: %.1f heap bytes per step (estimate %.0f)", buf.Steps(), per, want)
	if per > want || per < 0.8*want {
		t.Errorf("%.1f heap bytes per stored step, the estimate says %.0f", per, want)
	}
}

// sparseLearner is the sparse PCL learner of the feed-forward model over dim inputs and k actions,
// the model a continuous-control run collects with.
func sparseLearner(t *testing.T, dim, k int) *mlp.Learner {
	t.Helper()
	cfg := config.Default()
	cfg.Net, cfg.Algo, cfg.Alpha, cfg.Gamma = config.NetMLP, config.AlgoSparse, 0.1, 0.99
	eng, err := tensor.NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	l, err := mlp.NewLearner(cfg, dim, k, eng)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// settledHeap is the live heap once collections stop shrinking it. One collection is not enough
// after other tests: what sync.Pools hold goes to their victim caches first, and objects with
// finalizers are freed only after their finalizers have run. Memory of earlier tests counted in
// "before" and gone by "after" made the replay look half its size (53 bytes a step after the
// learner tests, in CI on 2026-11-29).
func settledHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	for range 10 {
		prev := m.HeapAlloc
		time.Sleep(10 * time.Millisecond) // the finalizers run on their own goroutine
		runtime.GC()
		runtime.ReadMemStats(&m)
		if m.HeapAlloc >= prev {
			break
		}
	}
	return m.HeapAlloc
}
