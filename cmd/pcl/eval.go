package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/envs/registry"
	"github.com/sparsepcl/sparsepcl/internal/envmaker"
)

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
		return evalSteps(ctx, *dir, &envmaker.Maker{Registry: reg, Servers: servers}, *n, *seed, stdout)
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
