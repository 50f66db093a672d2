package train

import (
	"context"
	"log/slog"
	"math"
	"testing"

	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// exploreCounter is an Observer that writes down each iteration's env steps and explored steps.
type exploreCounter struct {
	NopObserver
	steps, explored []int
}

func (c *exploreCounter) Sampled(s Sample) error {
	c.steps = append(c.steps, s.EnvSteps)
	c.explored = append(c.explored, s.Explored)
	return nil
}

// --explore-decay anneals the exploration of the fresh episodes: in every window of iterations
// the explored steps are what ε(it) = ε · decay^(it/100) predicts for the steps taken (within 5
// standard deviations), so a constant ε, or one set once at the start, fails the check.
func TestExploreDecayAnneals(t *testing.T) {
	cfg := smallEpisodesConfig()
	cfg.Iters, cfg.EvalEvery, cfg.Explore, cfg.ExploreDecay = 120, 0, 0.5, 1e-6
	rec := &exploreCounter{}
	if _, err := Run(context.Background(), cfg, Options{Registry: registry.Default(), Dir: t.TempDir(),
		Logger: slog.New(slog.DiscardHandler), Observer: rec}); err != nil {
		t.Fatal(err)
	}
	if len(rec.steps) != cfg.Iters {
		t.Fatalf("%d iterations sampled, want %d", len(rec.steps), cfg.Iters)
	}
	for _, w := range []struct{ from, to int }{{0, 20}, {20, 60}, {60, 120}} {
		var mean, variance float64
		got := 0
		for it := w.from; it < w.to; it++ {
			eps := cfg.ExploreAt(it)
			mean += eps * float64(rec.steps[it])
			variance += eps * (1 - eps) * float64(rec.steps[it])
			got += rec.explored[it]
		}
		if math.Abs(float64(got)-mean) > 5*math.Sqrt(variance)+1 {
			t.Errorf("iterations %d-%d: %d steps explored, want about %.1f", w.from, w.to-1, got, mean)
		}
	}
	if first := float64(rec.explored[0]) / float64(rec.steps[0]); first < 0.2 {
		t.Errorf("iteration 0 explored %.2f of its steps, want about 0.5: the check sees too little", first)
	}
}
