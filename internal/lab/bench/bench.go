// Package bench times training through train's one loop: on an algorithmic task the lstm
// learner's iterations (sampling, the two training steps, their FLOP rate against a bare gemm),
// on a long-episode env the whole loop (env steps per second of wall time, the shares of env
// stepping, sampling and training, and how far they overlap). pcl bench is its command.
package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/envs"
)

// Options are what a bench needs besides the config.
type Options struct {
	Registry *envs.Registry
	Envs     train.EnvMaker // the envs of a long-episode bench (nil: train.RegistryEnvs{Registry})
	Engine   *tensor.Engine // nil: resolved from SPARSEPCL_BLAS
	// Measure is the number of measured iterations: after one warm-up for the lstm family; all
	// of them for the mlp family, whose iterations are short (>= 1).
	Measure int
}

// Run times cfg's training (which must be resolved, as train.Resolve leaves it) and writes the
// figures to w: the lstm family's iterations (episodes), or the mlp family's whole loop (steps).
func Run(ctx context.Context, cfg config.Config, opts Options, w io.Writer) error {
	if train.FamilyOf(cfg).Net() == config.NetMLP {
		return steps(ctx, cfg, opts, w)
	}
	return episodes(ctx, cfg, opts, w)
}

// steps times the long-episode loop of cfg (pcl bench on an mlp env): opts.Measure
// iterations through the one training loop in a temporary directory, without greedy evaluation
// or checkpoints, and writes the env steps per second of wall time, the shares of the wall time
// spent stepping the envs (transport included), in the sampling forwards and in training, and
// the overlap efficiency, (env time + training time) / wall time: at most 1 while the two take
// turns, up to 2 when they run side by side.
func steps(ctx context.Context, cfg config.Config, opts Options, w io.Writer) error {
	if opts.Measure < 1 {
		return fmt.Errorf("bench: %d measured iterations, want >= 1", opts.Measure)
	}
	cfg.Iters, cfg.EvalEvery, cfg.CheckpointEvery = opts.Measure, 0, 0
	sum, err := train.Run(ctx, cfg, train.Options{Registry: opts.Registry, Envs: opts.Envs, Engine: opts.Engine, Logger: slog.New(slog.DiscardHandler)})
	if err == nil && sum.Interrupted {
		err = ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	st, last := sum.Steps, sum.Rows[len(sum.Rows)-1]
	wall := max(last.WallSeconds, 1e-9)
	share := func(x float64) float64 { return 100 * x / wall }
	c := sum.Config
	fmt.Fprintf(w, "bench: %s grid %d, %s/%s, %d copies × %d steps per iteration, %d training steps of %d sub-episodes each\n",
		c.Env, c.Grid, c.Algo, c.Form, c.NumEnvs, c.StepsPerIter, c.GradientSteps(), c.SubEpisodes)
	fmt.Fprintf(w, "env steps/s: %.0f (%d env steps in %.3f s of wall time)\n", float64(sum.EnvSteps)/wall, sum.EnvSteps, wall)
	fmt.Fprintf(w, "wall time: env stepping %.0f%%, sampling forwards %.0f%%, training %.0f%%; overlap efficiency %.2f\n",
		share(st.EnvSeconds), share(st.PolicySeconds), share(st.TrainSeconds), (st.EnvSeconds+st.TrainSeconds)/wall)
	return nil
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

// episodes times training iterations of the LSTM learner of cfg (pcl bench): it trains
// through the one training loop, with replay and without evaluation or checkpoints, in a
// temporary directory, for one warm-up iteration and opts.Measure measured ones, each of which
// samples a batch and takes the on-policy and the replay step. It writes the iteration rate, the
// split between sampling and training, and the training steps' FLOP rate against a bare gemm.
func episodes(ctx context.Context, cfg config.Config, opts Options, w io.Writer) error {
	if opts.Measure < 1 {
		return fmt.Errorf("bench: %d measured iterations, want >= 1", opts.Measure)
	}
	eng := opts.Engine
	if eng == nil {
		var err error
		if eng, err = tensor.NewEngine(); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
	}
	cfg.Iters, cfg.EvalEvery, cfg.CheckpointEvery, cfg.Replay = opts.Measure+1, 0, 0, true
	clock := &benchClock{w: w, backend: eng.Backend()}
	sum, err := train.Run(ctx, cfg, train.Options{Registry: opts.Registry, Engine: eng, Observer: clock, Logger: slog.New(slog.DiscardHandler)})
	if err == nil && sum.Interrupted {
		err = ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	n := float64(opts.Measure)
	iterSec := (clock.sample + clock.train).Seconds() / n
	trainRate := clock.flops / clock.train.Seconds()
	// Bare gemm of the LSTM's dominant shape: (B x H) times (H x 4H), same engine, same run.
	gemmRate, err := gemmFLOPs(eng, cfg.BatchSize*20, cfg.Hidden, 4*cfg.Hidden)
	if err != nil {
		return fmt.Errorf("bench: gemm: %w", err)
	}
	fmt.Fprintf(w, "iterations/s: %.3f (%.3f s/iteration: sampling %.3f s, two training steps %.3f s; %.0f env steps/iteration)\n",
		1/iterSec, iterSec, clock.sample.Seconds()/n, clock.train.Seconds()/n, float64(clock.envSteps)/n)
	fmt.Fprintf(w, "training step: %.2f GFLOP/s (matrix products performed); bare gemm %.2f GFLOP/s; ratio %.3f\n",
		trainRate/1e9, gemmRate/1e9, trainRate/gemmRate)
	return nil
}

// benchClock is bench's Observer: it writes the header when the run starts and, after the
// warm-up iteration (0), adds up the sampling and training time, the env steps sampled and the
// FLOPs of the training steps.
type benchClock struct {
	train.NopObserver
	w       io.Writer
	backend string
	hidden  int
	heads   []int

	sample, train time.Duration
	envSteps      int
	flops         float64
}

func (b *benchClock) Start(_ context.Context, run train.Watched) error {
	c := run.Config
	b.hidden, b.heads = c.Hidden, run.Learner.Model.Net.Config().HeadSizes
	fmt.Fprintf(b.w, "bench: %s base %d (|A| = %d), %s/%s, batch %d, hidden %d, BLAS %s\n",
		c.Env, c.Base, run.Spec.NumActions(), c.Algo, c.Form, c.BatchSize, c.Hidden, b.backend)
	return nil
}

func (b *benchClock) Sampled(s train.Sample) error {
	if s.Iteration == 0 {
		return nil
	}
	b.sample, b.envSteps = b.sample+s.Took, b.envSteps+s.EnvSteps
	return nil
}

func (b *benchClock) AfterStep(s train.Step, _ pcl.StepInfo, took time.Duration) error {
	if s.Iteration == 0 {
		return nil
	}
	b.train += took
	rows := 0
	for _, e := range s.Batch {
		rows += e.Len() + 1 // the learner feeds L+1 observations per episode
	}
	b.flops += stepFLOPs(rows, rows-len(s.Batch), b.hidden, b.heads)
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
