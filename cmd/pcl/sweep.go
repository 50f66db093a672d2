package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/sweep"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

const sweepUsage = `usage: pcl sweep plan|run|report|k8s [flags]

  plan    write a grid of runs into <out>/manifest.json
  run     run one run of the manifest by index (Slurm/Kubernetes array), or every unfinished one locally with --jobs
  report  figures and report.md of the runs, finished or not
  k8s     print the Kubernetes Indexed Job that runs the sweep (kubectl apply -f -)

Run 'pcl sweep <subcommand> -h' for its flags.
`

// runSweep dispatches `pcl sweep plan|run|report` (logic in agent/sweep).
func runSweep(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{errors.New("sweep: give a subcommand: plan, run, report or k8s (run 'pcl sweep -h' for what they do)")}
	}
	switch args[0] {
	case "plan":
		return sweepPlan(args[1:], stdout, stderr)
	case "run":
		return sweepRun(ctx, args[1:], stdout, stderr)
	case "report":
		return sweepReport(args[1:], stdout, stderr)
	case "k8s":
		return sweepK8s(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stderr, sweepUsage) // where the subcommands' -h writes
		return flag.ErrHelp
	}
	return usageError{fmt.Errorf("sweep: unknown subcommand %q (plan, run, report, k8s)", args[0])}
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
	fs.StringVar(&g.Preset, "preset", "", `"figure1": the paper's tasks and sizes; "figure1-largest": each task's largest of them`)
	fs.StringVar(&g.Envs, "envs", "", "comma-separated env ids")
	fs.StringVar(&g.Actions, "actions", "", "comma-separated action-space sizes |A| (the base is derived per task)")
	fs.StringVar(&g.Bases, "bases", "", "comma-separated bases (instead of --actions)")
	fs.StringVar(&g.Algos, "algos", "sparse,soft", "comma-separated algorithms")
	fs.StringVar(&g.SparseAlphas, "sparse-alphas", "", "comma-separated alphas of sparse PCL, each for every task or env:alpha for one")
	fs.StringVar(&g.SoftAlphas, "soft-alphas", "", "comma-separated taus of soft PCL, each for every task or env:tau for one")
	fs.StringVar(&g.TsallisAlphas, "tsallis-alphas", "", "comma-separated alphas of Tsallis PCL, each for every task or env:alpha for one")
	fs.StringVar(&g.TsallisQs, "tsallis-qs", "", "comma-separated q of Tsallis PCL")
	fs.StringVar(&g.ItersPerEnv, "iters-per-env", "", "budget per task, env:iterations,... (default --iters)")
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
	m, err := sweep.Plan(sweep.Spec{Name: *name, Base: cfg, Cells: cells, Seeds: *seeds, FirstSeed: cfg.Seed, TaskThresholds: !given["threshold"]})
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
		pending, err := sweep.Pending(*dir, m)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "sweep: %d of %d runs to do, %d at a time (logs in %s)\n", len(pending), len(m.Runs), *jobs, filepath.Join(*dir, "logs"))
		err = sweep.Local(ctx, *jobs, pending, func(ctx context.Context, i int) error { return sweepProcess(ctx, *dir, m.Runs[i]) })
		return interrupted(ctx, err, "the runs under way saved their checkpoints; run the same pcl sweep run again to resume them")
	}
	i, err := sweep.ResolveIndex(*index, *offset, len(m.Runs), os.Getenv)
	if err != nil {
		return usageError{err}
	}
	st, err := sweep.RunIndex(ctx, *dir, i, sweep.RunOptions{Registry: registry.Default()})
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

// sweepProcess runs `pcl sweep run --index` for r in a single-threaded subprocess of this binary,
// its output appended to <dir>/logs/<id>.log. Cancelling ctx interrupts it, which checkpoints.
func sweepProcess(ctx context.Context, dir string, r sweep.Run) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	logPath := filepath.Join(dir, "logs", r.ID+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return err
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, exe, "sweep", "run", "--dir", dir, "--index", strconv.Itoa(r.Index))
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "OPENBLAS_NUM_THREADS=1")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 2 * time.Minute
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w (output in %s%s)", r.ID, err, logPath, lastLine(logPath))
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
	groups, err := sweep.Report(*dir, *out)
	if err != nil {
		return err
	}
	fin, all := 0, 0
	for _, g := range groups {
		fin += g.Finished
		all += len(g.Runs)
	}
	fmt.Fprintf(stdout, "sweep: report of %d finished runs out of %d in %s\n", fin, all, filepath.Join(*out, sweep.ReportFile))
	if fin < all {
		fmt.Fprintf(stdout, "sweep: %d runs are not finished; the report lists them\n", all-fin)
	}
	return nil
}

func sweepK8s(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sweep k8s", stderr)
	dir := fs.String("dir", "", "sweep directory (its manifest gives the number of runs)")
	var o sweep.JobOptions
	fs.StringVar(&o.Image, "image", "", "container image with pcl on its PATH")
	fs.StringVar(&o.Name, "name", "", "the Job's name (default pcl-<the sweep directory's name>)")
	fs.StringVar(&o.Claim, "claim", "pcl-data", "PersistentVolumeClaim that holds the sweep directory")
	fs.StringVar(&o.Mount, "mount", "/data", "where the claim is mounted in the pods")
	fs.StringVar(&o.PodDir, "pod-dir", "", "the sweep directory in the pods (default <mount>/<dir> for a relative --dir, --dir itself for an absolute one under --mount)")
	fs.IntVar(&o.Parallelism, "parallelism", 50, "pods at once (at most the number of runs)")
	fs.IntVar(&o.BackoffPerIndex, "backoff-per-index", 3, "retries of a run whose pod fails; it resumes from its checkpoint")
	fs.StringVar(&o.Memory, "memory", "1Gi", "memory request of each pod, a Kubernetes `quantity`")
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
	if o.Name == "" {
		o.Name = sweep.JobName(*dir)
	}
	if o.PodDir == "" {
		if o.PodDir, err = sweep.PodDir(*dir, o.Mount); err != nil {
			return usageError{err}
		}
	}
	job, err := sweep.IndexedJob(m, o)
	if err != nil {
		return usageError{err}
	}
	_, err = stdout.Write(job)
	return err
}
