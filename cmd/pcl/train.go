package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// isTerminal reports whether w is a character device (progress lines only go to terminals).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// parseTrainConfig registers every config flag on fs, parses args and applies the per-algorithm
// default alpha when --alpha was not given.
func parseTrainConfig(fs *flag.FlagSet, args []string, cfg *config.Config) error {
	cfg.RegisterFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	alphaSet := false
	fs.Visit(func(f *flag.Flag) { alphaSet = alphaSet || f.Name == "alpha" })
	if !alphaSet {
		cfg.Alpha = config.DefaultAlpha(cfg.Algo, cfg.Base)
	}
	return nil
}

func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("train", stderr)
	cfg := config.Default()
	out := fs.String("out", "", "run directory (default runs/<env>-base<B>-<algo>-seed<S>)")
	resume := fs.Bool("resume", false, "continue the run in --out from its checkpoint (its config.json wins; --iters may extend it)")
	if err := parseTrainConfig(fs, args, &cfg); err != nil {
		return err
	}
	if *out == "" {
		if *resume {
			return usageError{fmt.Errorf("--resume needs --out")}
		}
		*out = fmt.Sprintf("runs/%s-base%d-%s-seed%d", cfg.Env, cfg.Base, cfg.Algo, cfg.Seed)
	}
	if !*resume {
		if err := cfg.Validate(); err != nil {
			return usageError{err}
		}
	}
	reg := registry.Default()
	if _, err := reg.Lookup(cfg.Env); err != nil {
		return usageError{err}
	}
	opts := train.Options{Dir: *out, Resume: *resume, Registry: reg}
	if isTerminal(stderr) {
		opts.Progress = stderr
	}
	sum, err := train.Run(ctx, cfg, opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "run %s: %d iterations, %.3f s/iteration, last greedy reward %.3f", *out, sum.Iterations, sum.SecondsPerIt, sum.LastGreedy)
	if sum.Interrupted {
		fmt.Fprint(stdout, " (interrupted; resume with --resume)")
	}
	fmt.Fprintln(stdout)
	return nil
}
