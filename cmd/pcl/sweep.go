package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/envs/registry"
	"github.com/sparsepcl/sparsepcl/internal/lab/evaluation"
	"github.com/sparsepcl/sparsepcl/internal/lab/runplot"
	"github.com/sparsepcl/sparsepcl/internal/lab/sweep"
)

const sweepUsage = `usage: pcl sweep plan|run|report|choose|evaluate|k8s [flags]

  plan    write a grid of runs into <out>/manifest.json
  run     run one run of the manifest by index (Slurm/Kubernetes array), or every unfinished one locally with --jobs
  report  figures and report.md of the runs, finished or not
  choose  issue 48's step 3: each size's and algorithm's lever set from the credit sweeps, and the evaluation sweeps' plan flags
  evaluate  sparse against soft PCL per task size over one or more sweeps: steady passes, sample std, 95% intervals, paired differences
  k8s     print the Kubernetes Indexed Job that runs the sweep (kubectl apply -f -)

Run 'pcl sweep <subcommand> -h' for its flags.
`

// runSweep dispatches `pcl sweep plan|run|report|choose|k8s` (logic in internal/lab/sweep and internal/lab/evaluation).
func runSweep(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{errors.New("sweep: give a subcommand: plan, run, report, choose, evaluate or k8s (run 'pcl sweep -h' for what they do)")}
	}
	switch args[0] {
	case "plan":
		return sweepPlan(args[1:], stdout, stderr)
	case "run":
		return sweepRun(ctx, args[1:], stdout, stderr)
	case "report":
		return sweepReport(args[1:], stdout, stderr)
	case "choose":
		return sweepChoose(args[1:], stdout, stderr)
	case "evaluate":
		return sweepEvaluate(args[1:], stdout, stderr)
	case "k8s":
		return sweepK8s(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stderr, sweepUsage) // where the subcommands' -h writes
		return flag.ErrHelp
	}
	return usageError{fmt.Errorf("sweep: unknown subcommand %q (plan, run, report, choose, evaluate, k8s)", args[0])}
}

// sweepPlanIgnores says why a config flag does not apply to sweep plan ("" when it does): the
// grid flags give these per cell.
func sweepPlanIgnores(name string) string {
	switch name {
	case "env", "base", "algo", "alpha", "tsallis-q":
		return "the grid flags (--envs, --actions/--bases, --algos, --*-alphas, --tsallis-qs) give it per cell"
	}
	return ""
}

func sweepPlan(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sweep plan", stderr)
	cfg := config.Default()
	out := fs.String("out", "", "sweep directory (manifest.json is written there)")
	name := fs.String("name", "", "sweep name shown in the report")
	seeds := fs.Int("seeds", 1, "seeds per cell: --seed, --seed+1, ...")
	var g sweep.Grid
	g.RegisterFlags(fs)
	cfg.RegisterFlags(fs)
	check := hideFlags(fs, sweepPlanIgnores)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := check(); err != nil {
		return err
	}
	given := givenFlags(fs)
	if *out == "" {
		return usageError{errors.New("sweep plan: --out is required")}
	}
	cells, err := g.Cells()
	if err != nil {
		return usageError{err}
	}
	m, err := sweep.Plan(sweep.Spec{Name: *name, Base: cfg, Cells: cells, Seeds: *seeds, FirstSeed: cfg.Seed, TaskThresholds: !given["reward-threshold"]})
	if err != nil {
		return usageError{err}
	}
	if err := sweep.Write(*out, m); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sweep: %d runs planned in %s (indices 0..%d)\n", len(m.Runs), filepath.Join(*out, sweep.ManifestFile), len(m.Runs)-1)
	return nil
}

func sweepRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sweep run", stderr)
	dir := fs.String("dir", "", "sweep directory")
	index := fs.Int("index", -1, "run index (default: $SLURM_ARRAY_TASK_ID or $JOB_COMPLETION_INDEX)")
	offset := fs.Int("offset", 0, "added to an index taken from the environment (a sweep split over several Slurm arrays)")
	jobs := fs.Int("jobs", 0, "instead of one index: run every unfinished run locally, this many at once (each a single-threaded subprocess)")
	lockWait := fs.Duration("lock-wait", 2*time.Minute, "with an index: how long to wait while another process holds the run (a requeued Slurm task starts while the one it replaces saves its checkpoint)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dir == "" {
		return usageError{errors.New("sweep run: --dir is required")}
	}
	m, err := sweep.Load(*dir)
	if err != nil {
		return err
	}
	if *jobs > 0 {
		if *index >= 0 {
			return usageError{errors.New("sweep run: give --index or --jobs, not both")}
		}
		err := sweep.RunAll(ctx, *dir, *jobs, nil, stdout)
		return interrupted(ctx, err, "the runs under way saved their checkpoints; run the same pcl sweep run again to resume them")
	}
	i, err := sweep.ResolveIndex(*index, *offset, len(m.Runs), os.Getenv)
	if err != nil {
		return usageError{err}
	}
	log := textLogger(stderr)
	if err := sweep.WaitForRun(ctx, *dir, i, *lockWait, log); err != nil {
		return interrupted(ctx, err, "nothing was changed")
	}
	st, err := sweep.RunIndex(ctx, *dir, i, sweep.RunOptions{Registry: registry.Default(), Logger: log, Plot: runplot.Run})
	if err != nil {
		return interrupted(ctx, err, fmt.Sprintf("run %d (%s) saved its checkpoint; run the same pcl sweep run again to resume it", i, m.Runs[i].ID))
	}
	if st.State == sweep.Finished {
		fmt.Fprintf(stdout, "sweep: run %d (%s) is finished (%d iterations): left alone\n", i, m.Runs[i].ID, st.Iteration)
	} else {
		fmt.Fprintf(stdout, "sweep: run %d (%s) done (found %s)\n", i, m.Runs[i].ID, st.State)
	}
	return nil
}

func sweepReport(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sweep report", stderr)
	dir := fs.String("dir", "", "sweep directory")
	out := fs.String("out", "", "report directory (default <dir>/report)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dir == "" {
		return usageError{errors.New("sweep report: --dir is required")}
	}
	if *out == "" {
		*out = filepath.Join(*dir, "report")
	}
	groups, err := evaluation.Report(*dir, *out)
	if err != nil {
		return err
	}
	fin, all := evaluation.Count(groups)
	fmt.Fprintf(stdout, "sweep: report of %d finished runs out of %d in %s\n", fin, all, filepath.Join(*out, evaluation.ReportFile))
	if fin < all {
		fmt.Fprintf(stdout, "sweep: %d runs are not finished; the report lists them\n", all-fin)
	}
	return nil
}

// sweepChoose is issue 48's step 3 (docs/results/figure1-levers/PROTOCOL.md): the credit sweeps
// in, the choices and the evaluation sweeps' plan flags out, into <out>/report.md.
func sweepChoose(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sweep choose", stderr)
	out := fs.String("out", "", "`directory` for report.md (required)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `usage: pcl sweep choose --out DIR SET=SWEEP_DIR...

Chooses, per task size and algorithm of the credit sweeps (one per lever set: none, advantage,
explore, both), the lever set with the most steady passes, ties broken by fewer levers, then by
the higher mean last-10%% greedy reward (that first when no lever set passes), at the weight its
runs used; and each size's evaluation budget, %d iterations where a chosen configuration was
still rising on two of three seeds, %d otherwise (docs/results/figure1-levers/PROTOCOL.md, steps 3
and 4, addenda 2 and 3). Writes
<out>/report.md with the choices and, once every cell is chosen, the evaluation sweeps, each as
pcl sweep plan flags.

flags:
`, evaluation.EvalItersRising, evaluation.EvalIters)
		fs.PrintDefaults()
	}
	if err := parseFlagsAndArgs(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usageError{errors.New("sweep choose: --out is required")}
	}
	dirs, err := evaluation.ParseCreditDirs(fs.Args())
	if err != nil {
		return usageError{err}
	}
	arms, err := evaluation.GatherCredit(dirs)
	if err != nil {
		return err
	}
	ch, err := evaluation.WriteChoices(*out, arms)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sweep: %d configurations chosen, %d not yet, in %s\n", len(ch.Chosen), len(ch.Waiting), filepath.Join(*out, evaluation.ReportFile))
	for _, s := range append(ch.Eval, ch.Small...) {
		fmt.Fprintf(stdout, "sweep: %s, levers %s: %s\n", s.Name, s.Set, s.Flags)
	}
	return nil
}

// sweepEvaluate is issue 48's evaluation report (docs/results/figure1-levers/PROTOCOL.md): the
// sweeps that ran each algorithm's chosen configuration in, <out>/evaluation.md out.
func sweepEvaluate(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sweep evaluate", stderr)
	out := fs.String("out", "", "`directory` for evaluation.md (required)")
	title := fs.String("title", "Sparse against soft PCL", "the report's title")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `usage: pcl sweep evaluate --out DIR SWEEP_DIR...

Pairs sparse and soft PCL per task size over the finished runs of the sweeps (one configuration
per algorithm and size, from any of them; a directory without a manifest is read as docs/results
keeps a sweep, its finished runs under runs/) and writes <out>/%s: per size the steady passes
(the mean greedy reward over the last 10%% of a run at the threshold, at the curriculum's top
level), the ever-reached and sampled columns, the last-10%% greedy mean with its sample std and
95%% t-interval; sparse against soft (ahead: more steady passes), the paired differences by seed
with their 95%% interval, the goal (%d of %d seeds); and every seed.

flags:
`, evaluation.EvaluationFile, evaluation.GoalPasses, evaluation.GoalSeeds)
		fs.PrintDefaults()
	}
	if err := parseFlagsAndArgs(fs, args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		return usageError{errors.New("sweep evaluate: give --out and at least one sweep directory")}
	}
	groups, err := evaluation.GatherGroups(fs.Args())
	if err != nil {
		return err
	}
	cs, err := evaluation.CompareSizes(groups)
	if err != nil {
		return err
	}
	if err := evaluation.WriteEvaluation(*out, *title, cs); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sweep: %d task sizes compared in %s\n", len(cs), filepath.Join(*out, evaluation.EvaluationFile))
	return nil
}

func sweepK8s(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sweep k8s", stderr)
	dir := fs.String("dir", "", "sweep directory (its manifest gives the number of runs)")
	var o sweep.JobOptions
	o.RegisterFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dir == "" {
		return usageError{errors.New("sweep k8s: --dir is required")}
	}
	if o.Image == "" {
		return usageError{errors.New("sweep k8s: --image is required (a container image with pcl on its PATH)")}
	}
	m, err := sweep.Load(*dir)
	if err != nil {
		return err
	}
	if err := o.Defaults(*dir); err != nil {
		return usageError{err}
	}
	job, err := sweep.IndexedJob(m, o)
	if err != nil {
		return usageError{err}
	}
	_, err = stdout.Write(job)
	return err
}
