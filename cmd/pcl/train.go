package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

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
// default alpha when --alpha was not given. It returns the names of the flags given.
func parseTrainConfig(fs *flag.FlagSet, args []string, cfg *config.Config) (map[string]bool, error) {
	cfg.RegisterFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["alpha"] {
		cfg.Alpha = config.DefaultAlpha(cfg.Algo, cfg.Base)
	}
	return set, nil
}

func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("train", stderr)
	cfg := config.Default()
	out := fs.String("out", "", "run directory (default runs/<env>-base<B>-<algo>-seed<S>)")
	resume := fs.Bool("resume", false, "continue the run in --out from its checkpoint (its config.json wins; --iters may extend it)")
	given, err := parseTrainConfig(fs, args, &cfg)
	if err != nil {
		return err
	}
	if *out == "" {
		if *resume {
			return usageError{fmt.Errorf("--resume needs --out")}
		}
		*out = fmt.Sprintf("runs/%s-base%d-%s-seed%d", cfg.Env, cfg.Base, cfg.Algo, cfg.Seed)
	}
	if *resume {
		// The run's config.json wins; silently ignoring a flag would surprise, so refuse it.
		var extra []string
		for name := range given {
			if name != "out" && name != "resume" && name != "iters" {
				extra = append(extra, "--"+name)
			}
		}
		if len(extra) > 0 {
			slices.Sort(extra)
			return usageError{fmt.Errorf("--resume continues the run with its config.json: only --iters may be given with it, not %s (edit %s to change the config)",
				strings.Join(extra, ", "), filepath.Join(*out, train.ConfigFile))}
		}
		if !train.HasCheckpoint(*out) {
			return fmt.Errorf("resume: %s holds no checkpoint (%s): nothing to resume; start the run without --resume", *out, train.CheckpointFile)
		}
		if !given["iters"] {
			saved, err := config.ReadFile(filepath.Join(*out, train.ConfigFile))
			if err != nil {
				return fmt.Errorf("resume: %w", err)
			}
			cfg.Iters = saved.Iters
		}
	} else {
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
