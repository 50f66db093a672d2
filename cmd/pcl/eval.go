package main

import (
	"context"
	"fmt"
	"io"

	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("eval", stderr)
	dir := fs.String("run", "", "run directory written by `pcl train`")
	n := fs.Int("episodes", 400, "greedy episodes (per curriculum length with --per-length)")
	seed := fs.Int64("seed", 12345, "seed of the evaluation episodes")
	perLength := fs.Bool("per-length", true, "also report greedy reward at every curriculum length up to the maximum")
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
