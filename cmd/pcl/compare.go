package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/plot"
	"github.com/sparsepcl/sparsepcl/agent/rollout"
	"github.com/sparsepcl/sparsepcl/agent/success"
	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/registry"
	"github.com/sparsepcl/sparsepcl/internal/atomicfile"
)

// compareAlgos are the algorithms a comparison runs, in table order.
var compareAlgos = [...]string{config.AlgoSparse, config.AlgoSoft}

// parseInts parses a comma-separated list of positive integers.
func parseInts(s, name string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("--%s: %q is not a positive integer", name, f)
		}
		out = append(out, v)
	}
	return out, nil
}

// parseWeights parses a regularisation weight flag: "" (def(base) for every base), one number
// for every base, or a per-base list "base:weight,..." that must give each base exactly one weight
// and no base outside bases.
func parseWeights(s, name string, bases []int, def func(base int) float64) (map[int]float64, error) {
	out := map[int]float64{}
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		for _, b := range bases {
			out[b] = def(b)
		}
	case !strings.Contains(s, ":"):
		w, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("--%s: %q is neither a number nor a list like 5:0.05,40:0.02", name, s)
		}
		for _, b := range bases {
			out[b] = w
		}
	default:
		for _, item := range strings.Split(s, ",") {
			bs, ws, ok := strings.Cut(strings.TrimSpace(item), ":")
			b, errB := strconv.Atoi(strings.TrimSpace(bs))
			w, errW := strconv.ParseFloat(strings.TrimSpace(ws), 64)
			if !ok || errB != nil || errW != nil {
				return nil, fmt.Errorf("--%s: %q is not base:weight", name, item)
			}
			if !slices.Contains(bases, b) {
				return nil, fmt.Errorf("--%s: base %d is not among the bases compared %v", name, b, bases)
			}
			if _, dup := out[b]; dup {
				return nil, fmt.Errorf("--%s: base %d has two weights", name, b)
			}
			out[b] = w
		}
		for _, b := range bases {
			if _, ok := out[b]; !ok {
				return nil, fmt.Errorf("--%s: base %d has no weight (give base:weight for every base, or one number for all)", name, b)
			}
		}
	}
	return out, nil
}

// compareJob is one training run of a comparison.
type compareJob struct {
	cfg config.Config
	dir string
	log string // output of the `pcl train` subprocess (with --jobs > 1)
}

// compareIgnores says why a config flag does not apply to compare ("" when it does).
func compareIgnores(name string) string {
	switch {
	case name == "base":
		return "compare takes its bases from --bases (one or several)"
	case name == "algo" || name == "alpha":
		return "compare runs both sparse and soft PCL; give their weights with --sparse-alpha and --soft-alpha (one value, or base:weight,... per base)"
	case name == "tsallis-q":
		return "compare runs sparse and soft PCL, not tsallis"
	case mlpFlag(name):
		return "compare trains the lstm family on the algorithmic tasks"
	}
	return ""
}

// runCompare trains sparse and soft PCL on each base for a fixed budget of --iters iterations and
// several seeds, then writes per-base figures and summary.md computed from the runs' metrics.csv.
//
// With --jobs N > 1, N runs go at once, each a `pcl train` subprocess of this binary with
// GOMAXPROCS=1 and OPENBLAS_NUM_THREADS=1 (OpenBLAS's thread count is per process): the
// per-time-step products at batch 400 are too small to keep two BLAS threads busy, so one
// single-threaded run per core finishes a comparison a little sooner than two-threaded runs in turn
// (README, Speed).
func runCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("compare", stderr)
	cfg := config.Default()
	bases := fs.String("bases", "5,40", "comma-separated bases of the algorithmic task")
	seeds := fs.Int("seeds", 3, "seeds per (base, algorithm): --seed, --seed+1, ...")
	out := fs.String("out", "runs/compare", "directory for the runs, figures and summary.md")
	sparseAlpha := fs.String("sparse-alpha", "", "alpha of sparse PCL: one value, or per base as base:alpha,... like 5:0.05,40:0.05 (default: the per-algorithm default)")
	softAlpha := fs.String("soft-alpha", "", "tau of soft PCL: one value, or per base as base:tau,... (default: the per-algorithm default)")
	jobs := fs.Int("jobs", 1, "`N` runs at once; above 1 each is a pcl train subprocess with GOMAXPROCS=1 OPENBLAS_NUM_THREADS=1, its output in <out>/logs")
	cfg.RegisterFlags(fs)
	check := hideFlags(fs, compareIgnores)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := check(); err != nil {
		return err
	}
	given := givenFlags(fs)
	if !given["threshold"] {
		cfg.RewardThreshold = success.DefaultThreshold(cfg.Env, cfg.RewardThreshold)
	}
	baseList, err := parseInts(*bases, "bases")
	if err != nil {
		return usageError{err}
	}
	if *seeds < 1 {
		return usageError{fmt.Errorf("--seeds = %d, want >= 1", *seeds)}
	}
	if *jobs < 1 {
		return usageError{fmt.Errorf("--jobs = %d, want >= 1", *jobs)}
	}
	weights := map[string]map[int]float64{}
	for i, algo := range compareAlgos {
		flagVal := []string{*sparseAlpha, *softAlpha}[i]
		w, err := parseWeights(flagVal, algo+"-alpha", baseList, func(b int) float64 { return config.DefaultAlpha(algo, b) })
		if err != nil {
			return usageError{err}
		}
		weights[algo] = w
	}
	if train.ResolveNet(cfg).Net != config.NetLSTM {
		return usageError{fmt.Errorf("compare sweeps the bases of the algorithmic tasks; %s trains the mlp family on long episodes: run the seeds with pcl train (scripts/halfcheetah does it for HalfCheetah) and gather them with pcl report", cfg.Env)}
	}
	reg := registry.Default()
	if _, err := reg.Lookup(cfg.Env); err != nil {
		return usageError{err}
	}
	var all []compareJob
	for _, base := range baseList {
		for _, algo := range compareAlgos {
			for s := range *seeds {
				c := cfg
				c.Base, c.Algo, c.Seed, c.Alpha = base, algo, cfg.Seed+int64(s), weights[algo][base]
				if err := c.Validate(); err != nil {
					return usageError{fmt.Errorf("base %d, %s: %w", base, algo, err)}
				}
				name := fmt.Sprintf("%s-seed%d", algo, c.Seed)
				all = append(all, compareJob{cfg: c, dir: filepath.Join(*out, fmt.Sprintf("base%d", base), name),
					log: filepath.Join(*out, "logs", fmt.Sprintf("base%d-%s.log", base, name))})
			}
		}
	}
	if err := runJobs(ctx, all, *jobs, reg, &lockedWriter{w: stdout}, stderr); err != nil {
		return err
	}
	var results []compareResult
	for _, base := range baseList {
		c := cfg
		c.Base = base
		actions, err := numActions(reg, c)
		if err != nil {
			return err
		}
		byAlgo := map[string][][]train.Row{}
		for _, algo := range compareAlgos {
			res := compareResult{base: base, actions: actions, algo: algo, weight: weights[algo][base]}
			for _, j := range all {
				if j.cfg.Base != base || j.cfg.Algo != algo {
					continue
				}
				rows, err := train.ReadMetrics(filepath.Join(j.dir, train.MetricsFile))
				if err != nil {
					return fmt.Errorf("compare: %w", err)
				}
				rows = rowsBefore(rows, j.cfg.Iters)
				byAlgo[algo] = append(byAlgo[algo], rows)
				res.seeds = append(res.seeds, summariseRun(rows, j.cfg.Iters, cfg.RewardThreshold))
			}
			results = append(results, res)
		}
		if err := compareFigures(*out, cfg, base, actions, weights, byAlgo); err != nil {
			return fmt.Errorf("compare: %w", err)
		}
	}
	md := compareMarkdown(cfg, *seeds, results)
	if err := atomicfile.WriteFile(filepath.Join(*out, "summary.md"), []byte(md), 0o644); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	fmt.Fprint(stdout, md)
	return nil
}

// numActions is the number of actions of c's env.
func numActions(reg *envs.Registry, c config.Config) (int, error) {
	env, err := train.MakeEnv(reg, c, 1)
	if err != nil {
		return 0, fmt.Errorf("compare: %w", err)
	}
	defer env.Close()
	spec, err := rollout.CheckEnv(env)
	if err != nil {
		return 0, fmt.Errorf("compare: %w", err)
	}
	return spec.NumActions(), nil
}

// lockedWriter serialises writes from concurrent runs.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// runJobs makes sure every job's dir holds its complete run, n at a time: in this process when n
// is 1, else in `pcl train` subprocesses. The first failure stops the others (interrupted runs
// save a checkpoint, so compare resumes them next time).
func runJobs(ctx context.Context, jobs []compareJob, n int, reg *envs.Registry, stdout, stderr io.Writer) error {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error // the failure that stopped the others, not their interruptions
	)
	work := make(chan compareJob)
	var wg sync.WaitGroup
	for range min(n, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				if err := compareRun(ctx, j, n > 1, reg, stdout, stderr); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					cancel()
				}
			}
		}()
	}
	fed := 0
feed:
	for _, j := range jobs {
		select {
		case work <- j:
			fed++
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	switch {
	case firstErr != nil && !errors.Is(firstErr, errInterrupted):
		return firstErr
	case parent.Err() != nil && (firstErr != nil || fed < len(jobs)):
		// The signal stopped the workers, which saved their runs; their errors only say so.
		return fmt.Errorf("%w: the runs saved their checkpoints; run the same pcl compare again to resume them", errInterrupted)
	}
	return firstErr
}

// compareRun makes sure j.dir holds the complete run of j.cfg. A complete run is reused, an
// incomplete one resumed, a missing one trained (in a subprocess when spawn is set). A dir whose
// run has another config (apart from iters) is an error: compare never deletes or overwrites a run.
func compareRun(ctx context.Context, j compareJob, spawn bool, reg *envs.Registry, stdout, stderr io.Writer) error {
	c, dir := train.ResolveNet(j.cfg), j.dir
	if saved, err := config.ReadFile(filepath.Join(dir, train.ConfigFile)); err == nil {
		saved.Iters = c.Iters
		if d := config.Diff(saved, c); d != nil {
			return fmt.Errorf("compare: %s holds a run with another config (%s); use another --out, or move that run away yourself",
				dir, strings.Join(d, ", "))
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("compare: %s: %w", dir, err)
	}
	what, resume := "train", false
	if train.HasCheckpoint(dir) {
		meta, err := train.ReadMeta(dir)
		if err != nil {
			return fmt.Errorf("compare: %w", err)
		}
		rows, err := train.ReadMetrics(filepath.Join(dir, train.MetricsFile))
		if err != nil {
			return fmt.Errorf("compare: %w", err)
		}
		_, reached := train.FirstReach(rows, c.RewardThreshold)
		if meta.Iteration >= c.Iters || (c.StopAtThreshold && reached) {
			fmt.Fprintf(stdout, "compare: %s is complete (%d iterations): reused\n", dir, meta.Iteration)
			return nil
		}
		what, resume = fmt.Sprintf("resume from iteration %d", meta.Iteration), true
	}
	where := ""
	if spawn {
		where = " (output in " + j.log + ")"
	}
	fmt.Fprintf(stdout, "compare: %s base %d %s seed %d: %s -> %s%s\n", c.Env, c.Base, c.Algo, c.Seed, what, dir, where)
	if spawn {
		return trainProcess(ctx, j, resume)
	}
	opts := train.Options{Dir: dir, Resume: resume, Registry: reg}
	if isTerminal(stderr) {
		opts.Progress = stderr
	}
	sum, err := train.Run(ctx, c, opts)
	if err != nil {
		return err
	}
	if sum.Interrupted {
		return fmt.Errorf("compare: %w during %s (run compare again to resume)", errInterrupted, dir)
	}
	return nil
}

// configArgs are the `pcl train` flags that give every field of c.
func configArgs(c config.Config) []string {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	c.RegisterFlags(fs) // c's values become the flags' values
	var args []string
	fs.VisitAll(func(f *flag.Flag) { args = append(args, "--"+f.Name+"="+f.Value.String()) })
	return args
}

// trainProcess runs `pcl train` for j in a subprocess of this binary, single-threaded, its output
// appended to j.log. Cancelling ctx interrupts it, which saves a checkpoint.
func trainProcess(ctx context.Context, j compareJob, resume bool) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("compare: find this binary to run `pcl train`: %w", err)
	}
	args := []string{"train", "--out", j.dir}
	if resume {
		args = append(args, "--resume", "--iters", strconv.Itoa(j.cfg.Iters))
	} else {
		args = append(args, configArgs(j.cfg)...)
	}
	if err := os.MkdirAll(filepath.Dir(j.log), 0o755); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	logf, err := os.OpenFile(j.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "OPENBLAS_NUM_THREADS=1")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 2 * time.Minute
	err = cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("compare: %w during %s (run compare again to resume)", errInterrupted, j.dir)
	}
	if err != nil {
		return fmt.Errorf("compare: pcl train %s: %w; its output is in %s%s", j.dir, err, j.log, lastLine(j.log))
	}
	// A run stopped from outside (a signal to the subprocess alone) exits cleanly but incomplete.
	meta, err := train.ReadMeta(j.dir)
	if err != nil {
		return fmt.Errorf("compare: after pcl train: %w", err)
	}
	if meta.Iteration < j.cfg.Iters && !j.cfg.StopAtThreshold {
		return fmt.Errorf("compare: pcl train %s stopped at iteration %d of %d (run compare again to resume); its output is in %s", j.dir, meta.Iteration, j.cfg.Iters, j.log)
	}
	return nil
}

// lastLine returns ": " and the last non-empty line of the file at path, or "".
func lastLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return ": " + l
	}
	return ""
}

// rowsBefore keeps the rows of iterations < n.
func rowsBefore(rows []train.Row, n int) []train.Row {
	var out []train.Row
	for _, r := range rows {
		if r.Iteration < n {
			out = append(out, r)
		}
	}
	return out
}

// runSummary is what the table needs of one run, computed from its metrics rows.
type runSummary struct {
	final, support, maxProb float64 // means over the last 10% of the budget
	bestGreedy              float64 // NaN without evaluations
	trainReach, greedyReach *train.Row
	secPerIt                float64
}

// summariseRun summarises the rows of a run with the given iteration budget. The final window is
// the last ceil(budget/10) rows the run has (the last 10% of the budget, or of the iterations
// made when the run stopped at the threshold).
func summariseRun(rows []train.Row, budget int, threshold float64) runSummary {
	s := runSummary{final: math.NaN(), support: math.NaN(), maxProb: math.NaN(), bestGreedy: math.NaN(), secPerIt: math.NaN()}
	if len(rows) == 0 {
		return s
	}
	k := min(len(rows), max(1, (budget+9)/10))
	s.final, s.support, s.maxProb = 0, 0, 0
	for _, r := range rows[len(rows)-k:] {
		s.final += r.MeanReward / float64(k)
		s.support += r.Support / float64(k)
		s.maxProb += r.MaxProb / float64(k)
	}
	for _, r := range rows {
		if !math.IsNaN(r.GreedyReward) && (math.IsNaN(s.bestGreedy) || r.GreedyReward > s.bestGreedy) {
			s.bestGreedy = r.GreedyReward
		}
		if s.trainReach == nil && r.MeanReward >= threshold {
			s.trainReach = &r
		}
	}
	if r, ok := train.FirstReach(rows, threshold); ok {
		s.greedyReach = &r
	}
	last := rows[len(rows)-1]
	s.secPerIt = last.WallSeconds / float64(last.Iteration+1)
	return s
}

// compareResult is one (base, algo) cell of the summary.
type compareResult struct {
	base, actions int
	algo          string
	weight        float64
	seeds         []runSummary
}

func meanStd(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	v := 0.0
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return m, math.Sqrt(v / float64(len(xs)))
}

// reachCells formats the median iterations and wall seconds to the threshold over the seeds that
// reached it, and "k/n reached".
func reachCells(seeds []runSummary, reach func(runSummary) *train.Row) (iters, secs, count string) {
	var its, ws []float64
	for _, s := range seeds {
		if r := reach(s); r != nil {
			its, ws = append(its, float64(r.Iteration+1)), append(ws, r.WallSeconds)
		}
	}
	count = fmt.Sprintf("%d/%d", len(its), len(seeds))
	if len(its) == 0 {
		return "-", "-", count
	}
	return fmt.Sprintf("%.0f", median(its)), fmt.Sprintf("%.1f", median(ws)), count
}

// num formats x, or "-" for NaN.
func num(format string, x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf(format, x)
}

func compareMarkdown(cfg config.Config, seeds int, rs []compareResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## %s: sparse vs soft PCL, %d iterations, batch %d, %d seeds\n\n", cfg.Env, cfg.Iters, cfg.BatchSize, seeds)
	fmt.Fprintf(&b, "Final reward, support and max_prob: means over the last 10%% of the budget (%d iterations); reward as mean ± std over seeds, support and max_prob as means over seeds. ", max(1, (cfg.Iters+9)/10))
	b.WriteString("Best greedy: each seed's best greedy reward (measured at the training curriculum's length), mean over seeds [max]. ")
	fmt.Fprintf(&b, "To threshold (reward >= %g): iterations and wall seconds, median over the seeds that reached it, on the mean sampled (training) reward and on the greedy reward. ", cfg.RewardThreshold)
	if cfg.StopAtThreshold {
		b.WriteString("Runs stopped at the greedy threshold (--stop-at-threshold), so the budget is not fixed: the final window is each run's last iterations. ")
	}
	b.WriteString("All from the runs' metrics.csv.\n\n")
	b.WriteString("| base | \\|A\\| | algo | weight | seeds | final reward | best greedy | iters to thr (train) | s to thr (train) | reached (train) | iters to thr (greedy) | s to thr (greedy) | reached (greedy) | support | max_prob | s/iteration |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		var finals, best, sup, mp, spi []float64
		for _, s := range r.seeds {
			finals, sup, mp, spi = append(finals, s.final), append(sup, s.support), append(mp, s.maxProb), append(spi, s.secPerIt)
			if !math.IsNaN(s.bestGreedy) {
				best = append(best, s.bestGreedy)
			}
		}
		fm, fsd := meanStd(finals)
		bm, _ := meanStd(best)
		bestCell := "-"
		if len(best) > 0 {
			bestCell = fmt.Sprintf("%.2f [%.2f]", bm, slices.Max(best))
		}
		ti, ts, tk := reachCells(r.seeds, func(s runSummary) *train.Row { return s.trainReach })
		gi, gs, gk := reachCells(r.seeds, func(s runSummary) *train.Row { return s.greedyReach })
		sm, _ := meanStd(sup)
		mm, _ := meanStd(mp)
		pm, _ := meanStd(spi)
		fmt.Fprintf(&b, "| %d | %d | %s | %g | %d | %s ± %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.base, r.actions, r.algo, r.weight, len(r.seeds), num("%.2f", fm), num("%.2f", fsd), bestCell,
			ti, ts, tk, gi, gs, gk, num("%.2f", sm), num("%.3f", mm), num("%.3f", pm))
	}
	return b.String()
}

// seedBand computes the band of value over one algorithm's runs: the mean over seeds at each
// iteration and the min and max over the seeds that have that iteration.
func seedBand(name string, colour color.NRGBA, runs [][]train.Row, value func(train.Row) float64) plot.Band {
	type acc struct{ sum, min, max, n float64 }
	byIt := map[int]*acc{}
	for _, rows := range runs {
		for _, r := range rows {
			v := value(r)
			a := byIt[r.Iteration]
			if a == nil {
				a = &acc{min: v, max: v}
				byIt[r.Iteration] = a
			}
			a.sum, a.n, a.min, a.max = a.sum+v, a.n+1, math.Min(a.min, v), math.Max(a.max, v)
		}
	}
	its := make([]int, 0, len(byIt))
	for it := range byIt {
		its = append(its, it)
	}
	slices.Sort(its)
	b := plot.Band{Name: name, Colour: colour}
	for _, it := range its {
		a := byIt[it]
		b.X, b.Mean = append(b.X, float64(it)), append(b.Mean, a.sum/a.n)
		b.Lo, b.Hi = append(b.Lo, a.min), append(b.Hi, a.max)
	}
	return b
}

// algoColours are the figure colours of compareAlgos.
var algoColours = [...]color.NRGBA{{R: 0x1f, G: 0x77, B: 0xb4, A: 255}, {R: 0xd6, G: 0x27, B: 0x28, A: 255}}

// Figure names of a comparison, per base.
func rewardFigure(base int) string  { return fmt.Sprintf("compare-base%d.png", base) }
func maxProbFigure(base int) string { return fmt.Sprintf("compare-base%d-maxprob.png", base) }

// compareFigures writes, for one base (|A| = actions), the mean sampled episode reward and the
// probability of the most likely action against iterations: per algorithm the mean over seeds as a
// line over the min-max range over seeds as a translucent area.
func compareFigures(out string, cfg config.Config, base, actions int, weights map[string]map[int]float64, byAlgo map[string][][]train.Row) error {
	figs := []struct {
		file, title, y string
		value          func(train.Row) float64
	}{
		{rewardFigure(base), "mean episode reward", "mean sampled episode reward", func(r train.Row) float64 { return r.MeanReward }},
		{maxProbFigure(base), "probability of the most likely action", "mean max_a π(a|s) over visited states", func(r train.Row) float64 { return r.MaxProb }},
	}
	seedsLo, seedsHi := len(byAlgo[compareAlgos[0]]), 0
	for _, algo := range compareAlgos {
		seedsLo, seedsHi = min(seedsLo, len(byAlgo[algo])), max(seedsHi, len(byAlgo[algo]))
	}
	for _, f := range figs {
		var bands []plot.Band
		for i, algo := range compareAlgos {
			bands = append(bands, seedBand(plot.AlgoLabel(algo, weights[algo][base], 0), algoColours[i], byAlgo[algo], f.value))
		}
		title := fmt.Sprintf("%s %s: %s\n%s, %s", cfg.Env, plot.SizeLabel(actions, base, 0), plot.AlgosLabel(compareAlgos[:]), f.title, plot.SeedsLabel(seedsLo, seedsHi))
		if err := plot.Bands(filepath.Join(out, f.file), title, "iteration", f.y, bands); err != nil {
			return err
		}
	}
	return nil
}
