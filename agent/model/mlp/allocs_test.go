package mlp

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// A training step allocates nothing once its buffers exist, at both HalfCheetah grids, for
// sparse and soft PCL alike, on untrained networks (dense logit gradients) and on peaked ones
// (the sparse output-layer backward): memory stays flat however many steps a run takes. One
// worker is the experiments' setting (GOMAXPROCS=1); with more, each parallel row pass starts
// its goroutines, a few allocations a pass (TestTrainStepAllocationsWithWorkers).
func TestTrainStepAllocatesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("a few paper-sized steps at 5^6")
	}
	t.Setenv(tensor.EnvWorkers, "1")
	for _, k := range []int{729, 15625} {
		for _, algo := range []config.Algo{config.AlgoSparse, config.AlgoSoft} {
			for _, peaked := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/A=%d/peaked=%v", algo, k, peaked), func(t *testing.T) {
					l := benchLearner(t, algo, k)
					if peaked {
						w := l.Model.outputs[0].W.Value.Data
						for i := range w {
							w[i] *= 30
						}
					}
					segs := benchSegments(rand.New(rand.NewPCG(1, 2)), k)
					for range 3 { // the buffers reach their sizes
						if _, err := l.TrainStep(segs); err != nil {
							t.Fatal(err)
						}
					}
					allocs := testing.AllocsPerRun(2, func() {
						if _, err := l.TrainStep(segs); err != nil {
							t.Fatal(err)
						}
					})
					if allocs != 0 {
						t.Errorf("%v allocations per training step, want 0", allocs)
					}
				})
			}
		}
	}
}

// With two workers the only allocations are the goroutine hand-offs of the parallel row passes
// (tensor.ParallelRows): a handful per pass, a few dozen bytes each, not the step's buffers.
// With a lagged target and a trust region (issue 51's levers) the step allocates nothing either:
// the lagged pass swaps the parameters in place and keeps its own scratch.
func TestTrainStepWithLeversAllocatesNothing(t *testing.T) {
	t.Setenv(tensor.EnvWorkers, "1")
	for _, algo := range []config.Algo{config.AlgoSparse, config.AlgoSoft} {
		l := benchLearnerWith(t, algo, 729, func(c *config.Config) { c.TargetLag, c.TrustRegion = 0.9, 0.01 })
		segs := benchSegments(rand.New(rand.NewPCG(1, 2)), 729)
		for range 3 {
			if _, err := l.TrainStep(segs); err != nil {
				t.Fatal(err)
			}
		}
		allocs := testing.AllocsPerRun(2, func() {
			if _, err := l.TrainStep(segs); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s with a lagged target and a trust region: %v allocations per training step, want 0", algo, allocs)
		}
	}
}

func TestTrainStepAllocationsWithWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("a few paper-sized steps")
	}
	t.Setenv(tensor.EnvWorkers, "2")
	for _, algo := range []config.Algo{config.AlgoSparse, config.AlgoSoft} {
		l := benchLearner(t, algo, 729)
		segs := benchSegments(rand.New(rand.NewPCG(1, 2)), 729)
		if _, err := l.TrainStep(segs); err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(3, func() {
			if _, err := l.TrainStep(segs); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > 24 {
			t.Errorf("%s: %v allocations per training step with two workers, want the hand-offs alone (<= 24)", algo, allocs)
		}
	}
}
