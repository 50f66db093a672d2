package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sparsepcl/sparsepcl/agent/atomicfile"
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/model/lstm"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
	"github.com/sparsepcl/sparsepcl/envs/registry"
	"github.com/sparsepcl/sparsepcl/internal/lab/diag"
)

// runDiagnose trains with instrumentation (internal/lab/diag) and writes probe.csv and its panels, or,
// with --overlay, draws one measure of several probes (--probe name=dir, repeated) into one figure.
func runDiagnose(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("diagnose", stderr)
	cfg := config.Default()
	f := registerDiagnoseFlags(fs)
	cfgFlags := config.FlagNames()
	check := hideFlags(fs, func(name string) string {
		// The weight schedule is the config's own (--alpha-start, --alpha-decay): the training
		// loop the probe runs applies it.
		if cfgFlags[name] && !config.LearnerFlag(name) && name != "iters" && !config.ReplayFlag(name) && name != "alpha-start" && name != "alpha-decay" {
			return "diagnose trains the lstm learner with replay, without evaluations, checkpoints or thresholds"
		}
		return ""
	})
	if _, err := parseTrainConfig(fs, args, &cfg); err != nil {
		return err
	}
	if err := check(); err != nil {
		return err
	}
	if *f.from != "" {
		for name := range givenFlags(fs) {
			if cfgFlags[name] && name != "iters" {
				return usageError{fmt.Errorf("diagnose --from trains the run's own config: --%s is not taken with it (only --iters, the iterations more)", name)}
			}
		}
	}
	if cfg.AlphaStart > 0 && !givenFlags(fs)["alpha-decay"] {
		cfg.AlphaDecay = 0.5 // diagnose's default decay, from before the config had a schedule
	}
	switch {
	case *f.clone:
		return f.runClone(ctx, cfg, stdout)
	case *f.writes >= 0:
		if *f.from == "" {
			return usageError{errors.New("diagnose --replay-writes reads the replay of the run given by --from")}
		}
		return printReplayWrites(stdout, *f.from, *f.writes)
	case *f.overlay != "" || *f.table != "":
		return f.drawProbes()
	}
	return f.probe(ctx, cfg, stdout)
}

// diagnoseFlags are pcl diagnose's flags beyond the config's.
type diagnoseFlags struct {
	out, from, overlay, table, metric *string
	every, expert, writes             *int
	clone                             *bool
	cloneWidth                        *int
	probes                            stringList
}

func registerDiagnoseFlags(fs *flag.FlagSet) *diagnoseFlags {
	f := &diagnoseFlags{}
	f.out = fs.String("out", "", "probe `directory` (probe.csv, config.json, panels)")
	f.every = fs.Int("every", 5, "inspect every N iterations")
	f.expert = fs.Int("expert", 0, "put this many episodes of the task's scripted expert into replay before training")
	f.from = fs.String("from", "", "continue this run `directory` (pcl train's) from its checkpoint, with its config, for --iters more iterations, in a copy under --out/run (kept for pcl play and pcl eval)")
	f.overlay = fs.String("overlay", "", "instead of training: draw --metric of the --probe directories into this PNG `file`")
	f.table = fs.String("table", "", "instead of training: write the early-collapse measures of the --probe directories, one row per name (a name given again is another seed), into this markdown `file`")
	f.writes = fs.Int("replay-writes", -1, "instead of training: count the episodes of the --from run's replay (at its checkpoint) that hold a rewarded write of this `symbol`, and their share of the replay's draws")
	fs.Var(&f.probes, "probe", "`name=dir` of a probe drawn by --overlay or tabulated by --table, repeatable")
	f.metric = fs.String("metric", "p_correct_given_write", "column drawn by --overlay")
	f.clone = fs.Bool("clone", false, "instead of PCL: behaviour-clone the task's scripted expert with the run's network (--iters batches of --batch-size expert episodes, cross-entropy) into --out/probe.csv, evaluated every --every batches")
	f.cloneWidth = fs.Int("clone-width", 10, "with --clone: the widest input trained and evaluated")
	return f
}

// runClone behaviour-clones the expert with cfg's network and writes probe.csv (readable by
// --overlay) and config.json into --out.
func (f *diagnoseFlags) runClone(ctx context.Context, cfg config.Config, stdout io.Writer) error {
	if *f.out == "" {
		return usageError{errors.New("diagnose --clone: --out is required")}
	}
	task, err := algorithmic.TaskByID(cfg.Env)
	if err != nil {
		return usageError{fmt.Errorf("diagnose --clone: %w", err)}
	}
	if err := os.MkdirAll(*f.out, 0o755); err != nil {
		return err
	}
	if err := cfg.WriteFile(filepath.Join(*f.out, "config.json")); err != nil {
		return err
	}
	var buf bytes.Buffer
	lo := max(1, task.StartMinLength())
	recs, err := diag.Clone(ctx, diag.CloneOptions{Config: cfg, Episodes: cfg.BatchSize, Iters: cfg.Iters, Every: *f.every,
		MinWidth: lo, MaxWidth: max(lo, *f.cloneWidth), CSV: &buf})
	if werr := atomicfile.WriteFile(filepath.Join(*f.out, "probe.csv"), buf.Bytes(), 0o644); werr != nil {
		return werr
	}
	if err != nil {
		return err
	}
	r := recs[len(recs)-1]
	fmt.Fprintf(stdout, "clone after %d batches: cross-entropy %.4f, step accuracy %.4f, greedy solves %.2f of inputs of width %d-%d\n",
		r.Iteration, r.Loss, r.StepAccuracy, r.MeanSolved, lo, max(lo, *f.cloneWidth))
	return nil
}

// drawProbes draws --overlay or writes --table from the --probe directories.
func (f *diagnoseFlags) drawProbes() error {
	if *f.overlay != "" && *f.table != "" {
		return usageError{errors.New("diagnose: give one of --overlay and --table")}
	}
	var names []string
	var tabs []diag.Table
	for _, a := range f.probes {
		name, dir := filepath.Base(a), a
		if i := strings.LastIndex(a, "="); i >= 0 {
			name, dir = a[:i], a[i+1:]
		}
		t, err := diag.ReadCSV(filepath.Join(dir, "probe.csv"))
		if err != nil {
			return err
		}
		names, tabs = append(names, name), append(tabs, t)
	}
	if len(tabs) == 0 {
		return usageError{errors.New("diagnose --overlay and --table: give the probes with --probe name=dir")}
	}
	if *f.table != "" {
		return writeLeverTable(*f.table, names, tabs)
	}
	return diag.Overlay(*f.overlay, *f.metric, *f.metric, names, tabs)
}

// probe trains cfg (or continues the --from run) under the probe into --out, then draws its
// panels and prints the last inspection.
func (f *diagnoseFlags) probe(ctx context.Context, cfg config.Config, stdout io.Writer) error {
	out, from := *f.out, *f.from
	if out == "" {
		return usageError{errors.New("diagnose: --out is required")}
	}
	probeDir := ""
	if from != "" {
		saved, err := runstore.Dir(from).Config()
		if err != nil {
			return err
		}
		cfg.Env, probeDir = saved.Env, filepath.Join(out, "run")
	}
	if err := train.FamilyOf(cfg).Supports(train.ToolDiagnose, cfg.Env); err != nil {
		return usageError{err}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if from == "" { // with --from, out/run/config.json is the config trained
		if err := cfg.WriteFile(filepath.Join(out, "config.json")); err != nil {
			return err
		}
	}
	note := fmt.Sprintf("every=%d alpha_start=%v alpha_decay=%v expert=%d from=%s\n", *f.every, cfg.AlphaStart, cfg.AlphaDecay, *f.expert, from)
	if err := atomicfile.WriteFile(filepath.Join(out, "probe-options.txt"), []byte(note), 0o644); err != nil {
		return err
	}
	csv, err := os.Create(filepath.Join(out, "probe.csv"))
	if err != nil {
		return err
	}
	defer csv.Close()
	recs, probeErr := diag.Probe(ctx, cfg, diag.Options{Registry: registry.Default(), Every: *f.every, AlphaStart: cfg.AlphaStart,
		AlphaDecay: cfg.AlphaDecay, Expert: *f.expert, CSV: csv, From: from, Dir: probeDir})
	if err := csv.Close(); err != nil {
		return err
	}
	if probeErr != nil && (ctx.Err() == nil || len(recs) == 0) {
		return interrupted(ctx, probeErr, fmt.Sprintf("no iteration was inspected: %s holds only its header", csv.Name()))
	}
	if probeErr != nil {
		// Interrupted after some inspections: draw their panels too, then say so.
		probeErr = fmt.Errorf("%w: %s and its panels hold the iterations inspected up to %d", errInterrupted, csv.Name(), recs[len(recs)-1].Iteration)
	}
	t, err := diag.ReadCSV(filepath.Join(out, "probe.csv"))
	if err != nil {
		return err
	}
	if err := diag.Panels(out, t); err != nil {
		return err
	}
	if n := len(recs); n > 0 {
		r := recs[n-1]
		fmt.Fprintf(stdout, "iteration %d: reward %.3f, curriculum %d, write %.3f, p(correct|write) %.3f, support %.1f\n",
			r.Iteration, r.MeanReward, r.Curriculum, r.Fresh.WriteFrac, r.Fresh.PCorrectGivenWrite, r.Fresh.Support)
	}
	return probeErr
}

// writeLeverTable groups the probes by name (the seeds of a lever), in the order the names first
// come, and writes their lever table to path.
func writeLeverTable(path string, names []string, tabs []diag.Table) error {
	var order []string
	seeds := map[string][]diag.Table{}
	for i, n := range names {
		if seeds[n] == nil {
			order = append(order, n)
		}
		seeds[n] = append(seeds[n], tabs[i])
	}
	levers := make([]diag.Lever, 0, len(order))
	for _, n := range order {
		l, err := diag.SummariseLever(n, seeds[n])
		if err != nil {
			return err
		}
		levers = append(levers, l)
	}
	var buf bytes.Buffer
	if err := diag.WriteLeverTable(&buf, levers); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, buf.Bytes(), 0o644)
}

// printReplayWrites prints what the replay of the run in dir holds of symbol's rewarded writes.
func printReplayWrites(stdout io.Writer, dir string, symbol int) error {
	buf, meta, err := runstore.Dir(dir).Replay()
	if err != nil {
		return err
	}
	env, err := train.MakeEnv(registry.Default(), meta.Config, 1)
	if err != nil {
		return err
	}
	defer env.Close()
	spec, err := lstm.SpecOf(env)
	if err != nil {
		return err
	}
	task, err := diag.TaskOf(spec)
	if err != nil {
		return err
	}
	if symbol >= task.Base {
		return usageError{fmt.Errorf("diagnose --replay-writes %d: the run's alphabet is 0..%d", symbol, task.Base-1)}
	}
	w := diag.ReplayWrites(buf, task, symbol)
	batch := meta.Config.EffectiveReplayBatch()
	fmt.Fprintf(stdout, "replay at iteration %d: %d of %d episodes hold a rewarded write of %d (mean length %.1f); their share of the draws %.4f (uniform: %.4f), %.2f episodes in a replay batch of %d\n",
		meta.Iteration, w.Holding, w.Episodes, symbol, w.MeanLen, w.Mass, w.Uniform, w.Mass*float64(batch), batch)
	return nil
}
