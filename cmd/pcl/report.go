package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sparsepcl/sparsepcl/agent/atomicfile"
	"github.com/sparsepcl/sparsepcl/internal/lab/analysis"
)

// runReport gathers long-episode run directories into figures and a table.
func runReport(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", stderr)
	out := fs.String("out", "", "`directory` for the figures and report.md (required)")
	steps := fs.Int64("steps", 0, "report every run as it stood at this many env steps (0: as it stands), so runs that went on longer compare at one budget")
	baseline := fs.String("baseline", "", "`glob` on run directory names (e.g. 'grid3-default-*'): compare every other variant with these runs seed by seed (sample std, 95% t-intervals, paired differences)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: pcl report --out DIR RUN_DIR...\n\nGathers long-episode runs (any subset, finished or not) into <env>-grid<k>-return.png,\n<env>-grid<k>-maxprob.png, <env>-grid<k>-value.png, <env>-grid<k>-clip.png and report.md.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := parseFlagsAndArgs(fs, args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		return usageError{fmt.Errorf("give --out and at least one run directory (run 'pcl report -h' for the usage)")}
	}
	if *steps < 0 {
		return usageError{fmt.Errorf("--steps %d: want >= 0", *steps)}
	}
	if _, err := filepath.Match(*baseline, ""); err != nil {
		return usageError{fmt.Errorf("--baseline %q: %w", *baseline, err)}
	}
	runs, err := analysis.LoadRecords(fs.Args())
	if err != nil {
		return err
	}
	if *steps > 0 {
		runs = analysis.Until(runs, *steps)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	files, err := analysis.CurveFigures(*out, runs)
	if err != nil {
		return err
	}
	collapses, err := analysis.CollapseSection(runs)
	if err != nil {
		return err
	}
	md := analysis.CurveTable(runs) + collapses
	if *baseline != "" {
		isBase := func(r analysis.Record) bool {
			ok, _ := filepath.Match(*baseline, filepath.Base(r.Dir)) // the pattern was checked above
			return ok
		}
		md += analysis.PairedSection(runs, isBase)
	}
	md += analysis.ProvenanceSection(fs.Args())
	if err := atomicfile.WriteFile(filepath.Join(*out, "report.md"), []byte(md), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	fmt.Fprint(stdout, md)
	for _, f := range files {
		fmt.Fprintln(stdout, "figure:", filepath.Join(*out, f))
	}
	return nil
}
