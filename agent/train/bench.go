package train

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/rollout"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs"
)

// BenchOptions are what Family.Bench needs besides the config.
type BenchOptions struct {
	Registry *envs.Registry
	Engine   *tensor.Engine // nil: resolved from SPARSEPCL_BLAS
	Measure  int            // measured iterations, after one warm-up (>= 1)
}

// stepFLOPs counts the matrix-product FLOPs one training step performs (forward, and backward
// counted as twice the forward). agent/nn packs sequences by length, so only active rows count:
// rows is the number of (step, episode) rows, recurrentRows those past step 0 (the first step's
// state is zero, so it has no recurrent product). The input projection is a gather of
// pre-projected embedding rows, not a product, and is left out.
func stepFLOPs(rows, recurrentRows, hidden int, heads []int) float64 {
	perRow := 0.0
	for _, h := range heads {
		perRow += 2.0 * float64(hidden*h)
	}
	return 3 * (perRow*float64(rows) + 2.0*float64(hidden*4*hidden)*float64(recurrentRows))
}

// benchEpisodes times training iterations of the LSTM learner of cfg on one batch of whole
// episodes (pcl bench): per iteration it samples a batch and takes two training steps on it (the
// on-policy and the replay step's work, both on that batch), and writes the iteration rate, the
// split between sampling and training, and the training step's FLOP rate against a bare gemm.
func benchEpisodes(ctx context.Context, cfg config.Config, opts BenchOptions, w io.Writer) error {
	if opts.Measure < 1 {
		return fmt.Errorf("bench: %d measured iterations, want >= 1", opts.Measure)
	}
	env, err := MakeEnv(opts.Registry, cfg, cfg.BatchSize)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	defer env.Close()
	spec, err := rollout.CheckEnv(env)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	eng := opts.Engine
	if eng == nil {
		if eng, err = tensor.NewEngine(); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
	}
	l, err := pcl.NewLearner(cfg, spec, eng)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	s, err := rollout.NewSampler(env, l.Model, cfg.MaxSteps)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	fmt.Fprintf(w, "bench: %s base %d (|A| = %d), %s/%s, batch %d, hidden %d, BLAS %s\n",
		cfg.Env, cfg.Base, spec.NumActions(), cfg.Algo, cfg.Form, cfg.BatchSize, cfg.Hidden, eng.Backend())
	var sampleT, stepT time.Duration
	var flops float64
	var steps int
	for it := 0; it <= opts.Measure; it++ {
		t0 := time.Now()
		res, err := s.Sample(ctx, rand.New(rand.NewPCG(uint64(it), 1)), false, it, int64(it)*1_000_003)
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		t1 := time.Now()
		// Two steps per iteration (on-policy and replay); both on this batch here.
		for k := 0; k < 2; k++ {
			if _, err := l.TrainStep(res.Episodes); err != nil {
				return fmt.Errorf("bench: training step: %w", err)
			}
		}
		t2 := time.Now()
		if it == 0 {
			continue // warm-up
		}
		sampleT += t1.Sub(t0)
		stepT += t2.Sub(t1)
		rows := 0
		for _, e := range res.Episodes {
			steps += e.Len()
			rows += e.Len() + 1 // the learner feeds L+1 observations per episode
		}
		flops += 2 * stepFLOPs(rows, rows-len(res.Episodes), cfg.Hidden, l.Model.Net.Config().HeadSizes)
	}
	n := float64(opts.Measure)
	iterSec := (sampleT + stepT).Seconds() / n
	trainRate := flops / stepT.Seconds()
	// Bare gemm of the LSTM's dominant shape: (B x H) times (H x 4H), same engine, same run.
	gemmRate, err := gemmFLOPs(eng, cfg.BatchSize*20, cfg.Hidden, 4*cfg.Hidden)
	if err != nil {
		return fmt.Errorf("bench: gemm: %w", err)
	}
	fmt.Fprintf(w, "iterations/s: %.3f (%.3f s/iteration: sampling %.3f s, two training steps %.3f s; %.0f env steps/iteration)\n",
		1/iterSec, iterSec, sampleT.Seconds()/n, stepT.Seconds()/n, float64(steps)/n)
	fmt.Fprintf(w, "training step: %.2f GFLOP/s (matrix products performed); bare gemm %.2f GFLOP/s; ratio %.3f\n",
		trainRate/1e9, gemmRate/1e9, trainRate/gemmRate)
	return nil
}

// gemmFLOPs measures C = A*B for an (m x k) by (k x n) product on eng.
func gemmFLOPs(eng *tensor.Engine, m, k, n int) (float64, error) {
	a, b, c := tensor.New(m, k), tensor.New(k, n), tensor.New(m, n)
	for i := range a.Data {
		a.Data[i] = float32(i%7) * 0.1
	}
	for i := range b.Data {
		b.Data[i] = float32(i%5) * 0.1
	}
	reps := 0
	start := time.Now()
	for time.Since(start) < 500*time.Millisecond || reps < 3 {
		if err := eng.MatMul(c, a, false, b, false, 1, 0); err != nil {
			return 0, err
		}
		reps++
	}
	return 2 * float64(m*k*n) * float64(reps) / time.Since(start).Seconds(), nil
}
