package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/envs/registry"
	"github.com/sparsepcl/sparsepcl/internal/lab/evaluation"
	"github.com/sparsepcl/sparsepcl/internal/lab/runplot"
	"github.com/sparsepcl/sparsepcl/internal/lab/sweep"
)

// compareIgnores says why a config flag does not apply to compare ("" when it does).
func compareIgnores(name string) string {
	switch {
	case name == "base":
		return "compare takes its bases from --bases (one or several)"
	case name == "algo" || name == "alpha":
		return "compare runs both sparse and soft PCL; give their weights with --sparse-alpha and --soft-alpha (one value, or base:weight,... per base)"
	case name == "tsallis-q":
		return "compare runs sparse and soft PCL, not tsallis"
	case config.MLPFlag(name):
		return "compare trains the lstm family on the algorithmic tasks"
	}
	return ""
}

// runCompare is the compare preset of pcl sweep: it plans sparse and soft PCL on each base and
// seed into <out>/manifest.json, runs what is not finished (--jobs N > 1: N single-threaded
// subprocesses), and writes the sweep report into --out.
func runCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("compare", stderr)
	cfg := config.Default()
	p := sweep.Compare{}
	p.RegisterFlags(fs)
	seeds := fs.Int("seeds", 3, "seeds per (base, algorithm): --seed, --seed+1, ...")
	out := fs.String("out", "runs/compare", "sweep directory: manifest.json, runs/, logs/, report.md and the figures")
	jobs := fs.Int("jobs", 1, "`N` runs at once; above 1 each is a single-threaded subprocess, its output in <out>/logs")
	cfg.RegisterFlags(fs)
	check := hideFlags(fs, compareIgnores)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := check(); err != nil {
		return err
	}
	if *seeds < 1 {
		return usageError{fmt.Errorf("--seeds = %d, want >= 1", *seeds)}
	}
	if *jobs < 1 {
		return usageError{fmt.Errorf("--jobs = %d, want >= 1", *jobs)}
	}
	if err := train.FamilyOf(cfg).Supports(train.ToolCompare, cfg.Env); err != nil {
		return usageError{err}
	}
	p.Env = cfg.Env
	cells, err := p.Cells()
	if err != nil {
		return usageError{err}
	}
	m, err := sweep.Plan(sweep.Spec{Name: "compare " + cfg.Env, Base: cfg, Cells: cells, Seeds: *seeds, FirstSeed: cfg.Seed,
		TaskThresholds: !givenFlags(fs)["reward-threshold"]})
	if err != nil {
		return usageError{err}
	}
	if err := sweep.Write(*out, m); err != nil {
		return err
	}
	var opts *sweep.RunOptions
	if *jobs == 1 {
		opts = &sweep.RunOptions{Registry: registry.Default(), Logger: textLogger(stderr), Plot: runplot.Run}
		if isTerminal(stderr) {
			opts.Progress.W = stderr
		}
	}
	if err := sweep.RunAll(ctx, *out, *jobs, opts, stdout); err != nil {
		return interrupted(ctx, err, "the runs saved their checkpoints; run the same pcl compare again to resume them")
	}
	if _, err := evaluation.Report(*out, *out); err != nil {
		return err
	}
	md, err := os.ReadFile(filepath.Join(*out, evaluation.ReportFile))
	if err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	_, err = stdout.Write(md)
	return err
}
