package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// runBench times training iterations of the learner built from the config flags
// (train.Family.Bench; the lstm family only) through train's loop, which bench runs itself, with
// replay and without evaluation or checkpoints: the flags of the run around the learner
// (iterations, replay, evaluation, checkpoints, the mlp family) do not apply.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench", stderr)
	cfg := config.Default()
	cfg.Base = 40
	iters := fs.Int("measure", 3, "measured iterations (after one warm-up)")
	cfgFlags := config.FlagNames()
	check := hideFlags(fs, func(name string) string {
		if cfgFlags[name] && !config.LearnerFlag(name) {
			return "bench times the sampling and the two training steps (on-policy and replay) of its iterations"
		}
		return ""
	})
	if _, err := parseTrainConfig(fs, args, &cfg); err != nil {
		return err
	}
	if err := check(); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return usageError{err}
	}
	if *iters < 1 {
		return usageError{fmt.Errorf("--measure = %d, want >= 1", *iters)}
	}
	err := train.FamilyOf(cfg).Bench(ctx, cfg, train.BenchOptions{Registry: registry.Default(), Measure: *iters}, stdout)
	if errors.Is(err, train.ErrUnsupported) {
		return usageError{err}
	}
	return interrupted(ctx, err, "bench stopped before its measurement was complete (it saves nothing)")
}
