package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/plot"
	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

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

// compareResult is one (base, algo) cell of the summary, aggregated over seeds.
type compareResult struct {
	base                  int
	algo                  string
	finals                []float64 // mean sampled reward over the last 10 iterations, per seed
	reachIters, reachSecs []float64 // per seed that reached the threshold
	seeds                 int
	secPerIt              float64
}

func runCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("compare", stderr)
	cfg := config.Default()
	bases := fs.String("bases", "5,40", "comma-separated bases (alias of --base for lists)")
	seeds := fs.Int("seeds", 3, "seeds per (base, algorithm)")
	out := fs.String("out", "runs/compare", "directory for the runs, figures and summary.md")
	sparseAlpha := fs.Float64("sparse-alpha", config.DefaultAlpha(config.AlgoSparse, 0), "alpha of sparse PCL")
	softAlpha := fs.Float64("soft-alpha", config.DefaultAlpha(config.AlgoSoft, 0), "tau of soft PCL")
	cfg.RegisterFlags(fs)
	baseFlag := fs.Lookup("base")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	list := *bases
	if baseFlag.Value.String() != strconv.Itoa(config.Default().Base) {
		list = baseFlag.Value.String()
	}
	baseList, err := parseInts(list, "bases")
	if err != nil {
		return usageError{err}
	}
	if *seeds < 1 {
		return usageError{fmt.Errorf("--seeds = %d, want >= 1", *seeds)}
	}
	reg := registry.Default()
	if _, err := reg.Lookup(cfg.Env); err != nil {
		return usageError{err}
	}
	var results []*compareResult
	for _, base := range baseList {
		var series []plot.Series
		for _, algo := range []string{config.AlgoSparse, config.AlgoSoft} {
			res := &compareResult{base: base, algo: algo, seeds: *seeds}
			for s := 0; s < *seeds; s++ {
				c := cfg
				c.Base, c.Algo, c.Seed = base, algo, cfg.Seed+int64(s)
				c.Alpha = *sparseAlpha
				if algo == config.AlgoSoft {
					c.Alpha = *softAlpha
				}
				if err := c.Validate(); err != nil {
					return usageError{err}
				}
				dir := filepath.Join(*out, fmt.Sprintf("base%d", base), fmt.Sprintf("%s-seed%d", algo, c.Seed))
				rows, err := compareRun(ctx, c, dir, reg, stdout, stderr)
				if err != nil {
					return err
				}
				sum := train.Summary{Rows: rows}
				if n := len(rows); n > 0 {
					sum.SecondsPerIt = rows[n-1].WallSeconds / float64(n)
				}
				res.secPerIt += sum.SecondsPerIt / float64(*seeds)
				var xs, ys []float64
				tail := 0.0
				k := 0
				for i, r := range sum.Rows {
					xs, ys = append(xs, float64(r.Iteration)), append(ys, r.MeanReward)
					if i >= len(sum.Rows)-10 {
						tail += r.MeanReward
						k++
					}
				}
				res.finals = append(res.finals, tail/math.Max(1, float64(k)))
				if r, ok := train.FirstReach(sum.Rows, c.RewardThreshold); ok {
					res.reachIters = append(res.reachIters, float64(r.Iteration+1))
					res.reachSecs = append(res.reachSecs, r.WallSeconds)
				}
				name := ""
				if s == 0 {
					name = algo
				}
				series = append(series, plot.Series{Name: name, X: xs, Y: ys})
			}
			results = append(results, res)
		}
		colour := func(i int) int { return i / *seeds }
		fig := filepath.Join(*out, fmt.Sprintf("compare-base%d.png", base))
		if err := plot.Lines(fig, fmt.Sprintf("%s base %d: sparse vs soft PCL (%d seeds)", cfg.Env, base, *seeds), "iteration", "mean episode reward", series, colour); err != nil {
			return err
		}
	}
	md := compareMarkdown(cfg, results)
	if err := os.WriteFile(filepath.Join(*out, "summary.md"), []byte(md), 0o644); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	fmt.Fprint(stdout, md)
	return nil
}

// compareRun makes sure dir holds the complete run of c and returns its metrics rows (those of
// iterations < c.Iters). A complete run is reused, an incomplete one resumed, a missing one
// trained. A dir whose run has another config (apart from iters) is an error: compare never
// deletes or overwrites a run.
func compareRun(ctx context.Context, c config.Config, dir string, reg *envs.Registry, stdout, stderr io.Writer) ([]train.Row, error) {
	opts := train.Options{Dir: dir, Registry: reg}
	if isTerminal(stderr) {
		opts.Progress = stderr
	}
	if saved, err := config.ReadFile(filepath.Join(dir, train.ConfigFile)); err == nil {
		saved.Iters = c.Iters
		if d := config.Diff(saved, c); d != nil {
			return nil, fmt.Errorf("compare: %s holds a run with another config (%s); use another --out, or move that run away yourself",
				dir, strings.Join(d, ", "))
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("compare: %s: %w", dir, err)
	}
	what := "train"
	if train.HasCheckpoint(dir) {
		meta, err := train.ReadMeta(dir)
		if err != nil {
			return nil, fmt.Errorf("compare: %w", err)
		}
		rows, err := train.ReadMetrics(filepath.Join(dir, train.MetricsFile))
		if err != nil {
			return nil, fmt.Errorf("compare: %w", err)
		}
		_, reached := train.FirstReach(rows, c.RewardThreshold)
		if meta.Iteration >= c.Iters || (c.StopAtThreshold && reached) {
			fmt.Fprintf(stdout, "compare: %s is complete (%d iterations): reused\n", dir, meta.Iteration)
			return rowsBefore(rows, c.Iters), nil
		}
		what, opts.Resume = fmt.Sprintf("resume from iteration %d", meta.Iteration), true
	}
	fmt.Fprintf(stdout, "compare: %s base %d %s seed %d: %s -> %s\n", c.Env, c.Base, c.Algo, c.Seed, what, dir)
	sum, err := train.Run(ctx, c, opts)
	if err != nil {
		return nil, err
	}
	if sum.Interrupted {
		return nil, fmt.Errorf("compare: interrupted during %s (run compare again to resume)", dir)
	}
	return rowsBefore(sum.Rows, c.Iters), nil
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

func compareMarkdown(cfg config.Config, rs []*compareResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## %s: sparse vs soft PCL, %d iterations, batch %d\n\n", cfg.Env, cfg.Iters, cfg.BatchSize)
	fmt.Fprintf(&b, "Final reward: mean sampled episode reward over the last 10 iterations (mean ± std over seeds). Threshold: greedy reward >= %g.\n\n", cfg.RewardThreshold)
	b.WriteString("| base | |A| | algo | final reward | seeds reaching threshold | iterations to threshold | wall s to threshold | s/iteration |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		fm, fsd := meanStd(r.finals)
		im, _ := meanStd(r.reachIters)
		sm, _ := meanStd(r.reachSecs)
		it, ws := "-", "-"
		if len(r.reachIters) > 0 {
			it, ws = fmt.Sprintf("%.0f", im), fmt.Sprintf("%.0f", sm)
		}
		fmt.Fprintf(&b, "| %d | %d | %s | %.2f ± %.2f | %d/%d | %s | %s | %.2f |\n", r.base, 4*r.base, r.algo, fm, fsd, len(r.reachIters), r.seeds, it, ws, r.secPerIt)
	}
	return b.String()
}
