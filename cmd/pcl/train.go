package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/success"
	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/envs/registry"
	"github.com/sparsepcl/sparsepcl/internal/envmaker"
)

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// defaultRunDir names a run's directory after its env, size, algorithm and seed.
func defaultRunDir(cfg config.Config) string {
	if cfg.Net == config.NetMLP {
		size := ""
		if cfg.Grid > 0 {
			size = fmt.Sprintf("-grid%d", cfg.Grid)
		}
		return fmt.Sprintf("runs/%s%s-%s-seed%d", cfg.Env, size, cfg.Algo, cfg.Seed)
	}
	return fmt.Sprintf("runs/%s-base%d-%s-seed%d", cfg.Env, cfg.Base, cfg.Algo, cfg.Seed)
}

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
// default alpha when --alpha was not given, and the task's solved threshold when --threshold was not. It returns the names of the flags given.
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
	if !set["threshold"] {
		cfg.RewardThreshold = success.DefaultThreshold(cfg.Env, cfg.RewardThreshold)
	}
	*cfg = train.ResolveNet(*cfg)
	if cfg.Net == config.NetMLP {
		cfg.ApplyLongEpisodeDefaults(func(name string) bool { return set[name] })
	}
	return set, nil
}

func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("train", stderr)
	cfg := config.Default()
	out := fs.String("out", "", "run directory (default runs/<env>-base<B>-<algo>-seed<S>)")
	resume := fs.Bool("resume", false, "continue the run in --out from its checkpoint (its config.json wins; --iters may extend it)")
	var servers stringList
	fs.Var(&servers, "server", "endpoint of a running env server (tcp://host:port), repeatable; default: start one from .venv for ids that are not Go-native")
	remote := fs.Bool("remote", false, "serve the env from the Python server even when a Go-native version exists (the Gymnasium original)")
	given, err := parseTrainConfig(fs, args, &cfg)
	if err != nil {
		return err
	}
	if *out == "" {
		if *resume {
			return usageError{fmt.Errorf("--resume needs --out")}
		}
		*out = defaultRunDir(cfg)
	}
	if *resume {
		// The run's config.json wins; silently ignoring a flag would surprise, so refuse it.
		var extra []string
		for name := range given {
			if name != "out" && name != "resume" && name != "iters" && name != "server" && name != "remote" {
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
	maker := &envmaker.Maker{Registry: reg, Servers: servers, ForceRemote: *remote}
	opts := train.Options{Dir: *out, Resume: *resume, Registry: reg, Envs: maker}
	if isTerminal(stderr) {
		opts.Progress = stderr
	}
	sum, err := train.Run(ctx, cfg, opts)
	if errors.Is(err, envmaker.ErrUnknownEnv) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "run %s: %d iterations, %.3f s/iteration, last greedy reward %.3f", *out, sum.Iterations, sum.SecondsPerIt, sum.LastGreedy)
	if sum.Interrupted {
		fmt.Fprint(stdout, " (interrupted; resume with --resume)")
	}
	fmt.Fprintln(stdout)
	if st := sum.Steps; st != nil && sum.Rows != nil {
		last := sum.Rows[len(sum.Rows)-1]
		total := st.EnvSeconds + st.PolicySeconds + st.TrainSeconds + st.EvalSeconds
		pct := func(x float64) float64 { return 100 * x / max(total, 1e-9) }
		fmt.Fprintf(stdout, "time over the whole run: %.0f env steps/s of wall time; env stepping (transport included) %.1f s (%.0f%%), sampling forwards %.1f s (%.0f%%), training steps %.1f s (%.0f%%), greedy evaluation %.1f s (%.0f%%)\n",
			float64(sum.EnvSteps)/max(last.WallSeconds, 1e-9), st.EnvSeconds, pct(st.EnvSeconds), st.PolicySeconds, pct(st.PolicySeconds),
			st.TrainSeconds, pct(st.TrainSeconds), st.EvalSeconds, pct(st.EvalSeconds))
	}
	return nil
}
