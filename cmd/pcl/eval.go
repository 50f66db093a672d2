package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/envs/registry"
	"github.com/sparsepcl/sparsepcl/internal/envmaker"
)

// recordSteps writes one greedy episode of a long-episode run as a GIF and checks that the replay
// that rendered it reached the same return.
func recordSteps(ctx context.Context, dir string, maker *envmaker.Maker, seed int64, out string, stdout io.Writer) error {
	ep, cfg, err := train.RecordSteps(ctx, dir, maker, nil, seed)
	if err != nil {
		return err
	}
	res, err := maker.Render(ctx, cfg.Env, ep.Seed, ep.Actions, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "recorded %s: %d steps, return %.1f (replayed: %.1f), %d frames\n", out, len(ep.Actions), ep.Return, res.Return, res.Frames)
	if math.Abs(res.Return-ep.Return) > 1e-6*math.Max(1, math.Abs(ep.Return)) {
		return fmt.Errorf("record: the rendered replay returned %v, the episode %v: the env is not deterministic for this seed, the GIF shows another episode", res.Return, ep.Return)
	}
	return nil
}

// evalSteps prints the greedy returns of a long-episode run's checkpoint over n episodes.
func evalSteps(ctx context.Context, dir string, maker *envmaker.Maker, n int, seed int64, stdout io.Writer) error {
	returns, meta, err := train.EvaluateSteps(ctx, dir, maker, nil, n, seed)
	if err != nil {
		return err
	}
	c := meta.Config
	m, sd := meanStd(returns)
	size := ""
	if c.Grid > 0 {
		size = fmt.Sprintf(" grid %d", c.Grid)
	}
	fmt.Fprintf(stdout, "run %s (%s%s, %s/%s, alpha %g) after %d iterations (%d env steps): greedy return %.1f ± %.1f over %d episodes [min %.1f, max %.1f]\n",
		dir, c.Env, size, c.Algo, c.Form, c.Alpha, meta.Iteration, meta.EnvSteps, m, sd, n, slices.Min(returns), slices.Max(returns))
	return nil
}

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("eval", stderr)
	dir := fs.String("run", "", "run directory written by `pcl train`")
	n := fs.Int("episodes", 400, "greedy episodes (per curriculum length with --per-length)")
	seed := fs.Int64("seed", 12345, "seed of the evaluation episodes")
	perLength := fs.Bool("per-length", true, "also report greedy reward at every curriculum length up to the maximum")
	record := fs.String("record", "", "long-episode runs: also play one greedy episode (seed --seed) and write it as an animated GIF here")
	var servers stringList
	fs.Var(&servers, "server", "endpoint of a running env server, repeatable (runs on Gymnasium envs; default: start one)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dir == "" {
		return usageError{fmt.Errorf("--run is required")}
	}
	if *n < 1 {
		return usageError{fmt.Errorf("--episodes = %d, want >= 1", *n)}
	}
	reg := registry.Default()
	steps, _, err := train.IsStepsRun(*dir)
	if err != nil {
		return err
	}
	if steps {
		maker := &envmaker.Maker{Registry: reg, Servers: servers}
		if err := evalSteps(ctx, *dir, maker, *n, *seed, stdout); err != nil {
			return err
		}
		if *record == "" {
			return nil
		}
		return recordSteps(ctx, *dir, maker, *seed, *record, stdout)
	}
	if *record != "" {
		return usageError{fmt.Errorf("--record works on long-episode (mlp) runs; watch an algorithmic task with pcl play")}
	}
	r, meta, err := train.Evaluate(ctx, *dir, reg, nil, *n, *seed)
	if err != nil {
		return err
	}
	c := meta.Config
	fmt.Fprintf(stdout, "run %s (%s base %d, %s/%s, alpha %g) after %d iterations: mean greedy reward %.3f over %d episodes (fresh curriculum)\n",
		*dir, c.Env, c.Base, c.Algo, c.Form, c.Alpha, meta.Iteration, r, *n)
	if !*perLength {
		return nil
	}
	if meta.TrainCurriculum != nil && len(meta.TrainCurriculum.Curricula) > 0 {
		fmt.Fprintf(stdout, "training curriculum at the checkpoint: min_length %d\n", meta.TrainCurriculum.Curricula[0].MinLength)
	}
	levels, _, err := train.EvaluateLengths(ctx, *dir, reg, nil, *n, *seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n| min_length | mean greedy reward | mean target length | solved |\n|---|---|---|---|\n")
	for _, l := range levels {
		fmt.Fprintf(stdout, "| %d | %.3f | %.2f | %.1f%% |\n", l.MinLength, l.MeanReward, l.MeanTarget, 100*l.Solved)
	}
	return nil
}
