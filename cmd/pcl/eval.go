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
	n := fs.Int("episodes", 400, "greedy episodes")
	seed := fs.Int64("seed", 12345, "seed of the evaluation episodes")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dir == "" {
		return usageError{fmt.Errorf("--run is required")}
	}
	if *n < 1 {
		return usageError{fmt.Errorf("--episodes = %d, want >= 1", *n)}
	}
	r, meta, err := train.Evaluate(ctx, *dir, registry.Default(), nil, *n, *seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "run %s (%s base %d, %s/%s, alpha %g) after %d iterations: mean greedy reward %.3f over %d episodes (fresh curriculum)\n",
		*dir, meta.Config.Env, meta.Config.Base, meta.Config.Algo, meta.Config.Form, meta.Config.Alpha, meta.Iteration, r, *n)
	return nil
}
