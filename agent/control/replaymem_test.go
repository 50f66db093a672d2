package control

import (
	"context"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/collect"
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/memory"
	"github.com/sparsepcl/sparsepcl/agent/replay"
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
	l := benchLearnerWith(t, config.AlgoSparse, k, func(*config.Config) {})
	env, err := envs.SyncVec(func() (envs.Env, error) { e := newNoiseEnv(k, dim, 1); e.limit = 1000; return e, nil }, 1, envs.AutoresetDisabled)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := NewEncoder(env.ObservationSpace())
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
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
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
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / float64(buf.Steps())
	want := float64(memory.ReplayBytesPerStep(dim))
	t.Logf("%d steps stored: %.1f heap bytes per step (estimate %.0f)", buf.Steps(), per, want)
	if per > want || per < 0.8*want {
		t.Errorf("%.1f heap bytes per stored step, the estimate says %.0f", per, want)
	}
}
