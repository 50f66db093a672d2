package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/memory"
	"github.com/sparsepcl/sparsepcl/agent/progress"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
	"github.com/sparsepcl/sparsepcl/envs/registry"
	"github.com/sparsepcl/sparsepcl/internal/envmaker"
	"github.com/sparsepcl/sparsepcl/internal/lab/runplot"
)

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// defaultRunDir names a run's directory after its env, size (the base of an algorithmic task, the
// action grid of another env), algorithm and seed.
func defaultRunDir(cfg config.Config) string {
	if _, err := algorithmic.TaskByID(cfg.Env); err != nil {
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

// parseTrainConfig registers every config flag on fs, parses args and applies the defaults of the
// fields not given (train.Resolve without a threshold lookup: for bench and diagnose, which
// validate). It returns the names of the flags given.
func parseTrainConfig(fs *flag.FlagSet, args []string, cfg *config.Config) (map[string]bool, error) {
	cfg.RegisterFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	set := givenFlags(fs)
	resolved, err := train.Resolve(*cfg, config.FieldsGiven(set), nil)
	if err != nil {
		return nil, err
	}
	*cfg = resolved
	return set, nil
}

// resolveWith applies every default pcl train applies to the fields of cfg not given (flags
// by name), asking maker for the env's action space and reward threshold, and says on stderr when
// it chose the action grid; a bad field or an unknown env is a usage error.
func resolveWith(ctx context.Context, cfg config.Config, given map[string]bool, maker *envmaker.Maker, stderr io.Writer) (config.Config, error) {
	continuous := func(env string) (bool, error) { return maker.ContinuousActions(ctx, env) }
	cfg, gridChosen, err := train.ResolveGrid(cfg, config.FieldsGiven(given), continuous)
	if err == nil {
		lookup := func(env string) (float64, bool, error) { return maker.RewardThreshold(ctx, env) }
		cfg, err = train.Resolve(cfg, config.FieldsGiven(given), lookup)
	}
	if err == nil && gridChosen {
		fmt.Fprintf(stderr, "%s has a continuous action space and no --grid was given: the evaluated default, --grid %d with --norm-obs=%t (--grid 5 for the 5-point grid)\n",
			cfg.Env, cfg.Grid, cfg.NormObs)
	}
	switch {
	case errors.As(err, new(*config.FieldError)), errors.Is(err, envmaker.ErrUnknownEnv):
		return cfg, usageError{err}
	case err != nil:
		return cfg, err
	}
	return cfg, nil
}

// replayGCPercent is the garbage collector's target for a run of cfg (ok false: Go's default, or
// the GOGC the environment gives). A long-episode run's heap is mostly its replay, which grows
// slowly and allocates little besides (a training step allocates nothing), so Go's default
// headroom of 100% doubles its resident memory: with 25% the RSS grows 138 bytes per stored step
// while the replay fills, against 184 (docs/results/replay-soak), at the same speed.
func replayGCPercent(cfg config.Config, gogc string) (int, bool) {
	if gogc != "" || train.FamilyOf(cfg).Net() != config.NetMLP {
		return 0, false
	}
	return 25, true
}

// textLogger logs a run's lines as text on w (the command's stderr), never through the process-wide
// default logger.
func textLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// trainOutput is how `pcl train` reports, from its flags and whether stderr is a terminal.
type trainOutput struct {
	logFormat     string
	progressEvery time.Duration
}

// options sets the logger and the progress report of opts: log lines as text or JSON on stderr;
// progress as a live line on a terminal, else as a text or JSON line every progressEvery (0: none).
func (o trainOutput) options(opts *train.Options, stderr io.Writer) {
	opts.Logger = textLogger(stderr)
	if o.logFormat == "json" {
		opts.Logger = slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	if o.progressEvery <= 0 {
		return
	}
	opts.Progress.W, opts.Progress.Every = stderr, o.progressEvery
	switch {
	case o.logFormat == "json":
		opts.Progress.Format = progress.JSON
	case isTerminal(stderr):
		opts.Progress.Format = progress.Live
	default:
		opts.Progress.Format = progress.Text
	}
}

func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("train", stderr)
	cfg := config.Default()
	f := registerTrainFlags(fs)
	cfg.RegisterFlags(fs) // train.Resolve applies the defaults below, unless the run resumes
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	given := givenFlags(fs)
	limit, err := f.check()
	if err != nil {
		return err
	}
	if *f.out == "" && *f.resume {
		return usageError{fmt.Errorf("--resume needs --out")}
	}
	if *f.resume {
		if cfg.Iters, err = resumedIters(*f.out, given, cfg.Iters); err != nil {
			return err
		}
	}
	reg := registry.Default()
	creds, err := f.server.credentials(f.servers)
	if err != nil {
		return err
	}
	maker := &envmaker.Maker{Registry: reg, Servers: f.servers, Credentials: creds, ForceRemote: *f.remote, Server: f.server.options()}
	if !*f.resume { // a resumed run keeps its config.json
		if cfg, err = resolveWith(ctx, cfg, given, maker, stderr); err != nil {
			return err
		}
	}
	if *f.out == "" {
		*f.out = defaultRunDir(cfg) // after the defaults: it names the grid
	}
	gcFor := cfg
	if *f.resume {
		if _, saved, err := train.RunFamily(*f.out); err == nil {
			gcFor = saved
		}
	}
	if percent, ok := replayGCPercent(gcFor, os.Getenv("GOGC")); ok {
		debug.SetGCPercent(percent)
	}
	opts := train.Options{Dir: *f.out, Resume: *f.resume, Registry: reg, Envs: train.FactoryEnvs{Factory: maker}, MaxMemory: limit, FieldName: flagName, Plot: runplot.Run}
	trainOutput{logFormat: *f.logFormat, progressEvery: *f.progressEvery}.options(&opts, stderr)
	sum, err := train.Run(ctx, cfg, opts)
	if err != nil {
		return trainError(err, given["iters"], *f.resume)
	}
	return printTrained(stdout, *f.out, sum)
}

// trainFlags are pcl train's flags beyond the config's.
type trainFlags struct {
	out, logFormat, maxMemory *string
	resume, remote            *bool
	progressEvery             *time.Duration
	servers                   stringList
	server                    serverFlags
}

func registerTrainFlags(fs *flag.FlagSet) *trainFlags {
	f := &trainFlags{}
	f.out = fs.String("out", "", "run `directory` (default runs/<env>-base<B>-<algo>-seed<S>)")
	f.resume = fs.Bool("resume", false, "continue the run in --out from its checkpoint (or, when that is damaged, the one before), with its config.json; "+
		"--iters is then the run's new total number of iterations, above those done (without --iters: the saved total)")
	f.progressEvery = fs.Duration("progress-every", progress.DefaultEvery,
		"interval of the progress lines when stderr is not a terminal, or with --log-format json (0: no progress report; on a terminal the line is live)")
	f.logFormat = fs.String("log-format", "text", `"text" or "json": json prints the log and progress lines as JSON objects, one per line`)
	f.maxMemory = fs.String("max-memory", "", "refuse a configuration estimated to need more memory than this `size`, e.g. 32GiB (0 or off: no check; default: 80% of this machine's memory)")
	fs.Var(&f.servers, "server", "`endpoint` of a running env server (tcp://host:port), repeatable; default: start one from .venv for ids that are not Go-native")
	f.remote = fs.Bool("remote", false, "serve the env from the Python server even when a Go-native version exists (the Gymnasium original)")
	f.server.register(fs)
	return f
}

// check validates the output flags and returns the memory limit --max-memory sets.
func (f *trainFlags) check() (memory.Limit, error) {
	var limit memory.Limit // the zero value: train's default, 80% of the machine's memory
	if *f.logFormat != "text" && *f.logFormat != "json" {
		return limit, usageError{fmt.Errorf("--log-format %q: want text or json", *f.logFormat)}
	}
	if *f.progressEvery < 0 {
		return limit, usageError{fmt.Errorf("--progress-every %s: want a duration >= 0 (0: no progress report)", *f.progressEvery)}
	}
	if *f.maxMemory != "" {
		var err error
		if limit, err = memory.ParseLimit(*f.maxMemory); err != nil {
			return limit, usageError{fmt.Errorf("--max-memory: %w", err)}
		}
		if !limit.Off() {
			limit.From = "--max-memory " + strings.TrimSpace(*f.maxMemory)
		}
	}
	return limit, nil
}

// resumedIters checks a resume of the run in out and returns its total number of iterations:
// iters when --iters was given, else the saved total. The run's config.json wins; silently
// ignoring a flag would surprise, so any config flag is refused.
func resumedIters(out string, given map[string]bool, iters int) (int, error) {
	var extra []string
	for name := range given {
		switch name {
		case "out", "resume", "iters", "server", "remote", "progress-every", "log-format", "max-memory", "allow-imports", "env-module":
		default:
			extra = append(extra, "--"+name)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return 0, usageError{fmt.Errorf("--resume continues the run with its config.json: only --iters may be given with it, not %s (edit %s to change the config)",
			strings.Join(extra, ", "), filepath.Join(out, runstore.ConfigFile))}
	}
	if !runstore.Dir(out).HasCheckpoint() {
		return 0, fmt.Errorf("resume: %s holds no checkpoint (%s): nothing to resume; start the run without --resume", out, runstore.CheckpointFile)
	}
	if given["iters"] {
		return iters, nil
	}
	saved, err := runstore.Dir(out).Config()
	if err != nil {
		return 0, fmt.Errorf("resume: %w", err)
	}
	return saved.Iters, nil
}

// trainError turns train.Run's error into the command's, with the advice a user needs.
func trainError(err error, itersGiven, resume bool) error {
	var done *train.DoneError
	switch {
	case errors.Is(err, envmaker.ErrUnknownEnv), errors.Is(err, memory.ErrTooLarge):
		return usageError{err}
	case errors.Is(err, train.ErrRunExists):
		return fmt.Errorf("%w (use --resume, or another --out)", err)
	case errors.As(err, &done) && itersGiven:
		return usageError{fmt.Errorf("--iters %d is not above the %d iterations %s has already done: with --resume, --iters is the total number of iterations, "+
			"so pass --iters %d or more to continue the run; nothing was changed", done.Total, done.Done, done.Dir, done.Done+1)}
	case errors.As(err, &done):
		return usageError{fmt.Errorf("%s has already done %d iterations, its total: pass --iters N with N above %d to train it longer; nothing was changed",
			done.Dir, done.Done, done.Done)}
	case !resume:
		return flagError{err} // the config came from the flags: name them
	}
	return err
}

// printTrained prints the run's summary, verdict and time split; an interrupted run is then
// reported as an error, so that the exit code says it stopped early.
func printTrained(stdout io.Writer, out string, sum train.Summary) error {
	fmt.Fprintf(stdout, "run %s: %d iterations, %.3f s/iteration", out, sum.Iterations, sum.SecondsPerIt)
	if !math.IsNaN(sum.LastGreedy) {
		fmt.Fprintf(stdout, ", last greedy reward %.3f", sum.LastGreedy)
	}
	if sum.Interrupted {
		fmt.Fprint(stdout, " (interrupted; resume with --resume)")
	}
	fmt.Fprintln(stdout)
	fmt.Fprintln(stdout, train.Verdict(sum.Rows, sum.Iterations, sum.Config.Threshold()))
	if line, ok := sum.TimeSplit(); ok {
		fmt.Fprintln(stdout, line)
	}
	if sum.Interrupted {
		// After the summary: the run is saved and resumable.
		return fmt.Errorf("%w at iteration %d of %d; the checkpoint is saved, continue with: pcl train --out %s --resume", errInterrupted, sum.Iterations, sum.Config.Iters, out)
	}
	return nil
}
