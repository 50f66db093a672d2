package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
)

// Interval is a sample's mean with its sample standard deviation (n − 1) and the two-sided 95%
// Student-t interval of the mean, mean ± t(0.975, n−1)·std/√n (NaN bounds below two values).
type Interval struct {
	N               int
	Mean, Std       float64
	Lower, Upper    float64
	HalfWidth, TQ95 float64
}

// SampleInterval is the Interval of x.
func SampleInterval(x []float64) Interval {
	iv := Interval{N: len(x), Mean: math.NaN(), Std: math.NaN(), Lower: math.NaN(), Upper: math.NaN(), HalfWidth: math.NaN(), TQ95: math.NaN()}
	if len(x) == 0 {
		return iv
	}
	iv.Mean = stat.Mean(x, nil)
	if len(x) < 2 {
		return iv
	}
	iv.Std = stat.StdDev(x, nil) // n − 1
	iv.TQ95 = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(x) - 1)}.Quantile(0.975)
	iv.HalfWidth = iv.TQ95 * iv.Std / math.Sqrt(float64(len(x)))
	iv.Lower, iv.Upper = iv.Mean-iv.HalfWidth, iv.Mean+iv.HalfWidth
	return iv
}

// String is "mean ± std (95%: [lower, upper])".
func (iv Interval) String() string {
	return fmt.Sprintf("%s ± %s (95%%: [%s, %s])", numf("%.0f", iv.Mean), numf("%.0f", iv.Std), numf("%.0f", iv.Lower), numf("%.0f", iv.Upper))
}

// PassThreshold is where a run's moving mean return (over window iterations) first reaches
// threshold: the env steps and wall seconds of that row; ok false when it never does.
func PassThreshold(rows []runstore.Row, threshold float64, window int) (envSteps int64, wallSeconds float64, ok bool) {
	var sum float64
	var vals []float64
	for _, r := range rows {
		if math.IsNaN(r.MeanReward) {
			continue
		}
		vals = append(vals, r.MeanReward)
		sum += r.MeanReward
		if len(vals) > window {
			sum -= vals[len(vals)-window-1]
		}
		if len(vals) >= window && sum/float64(window) >= threshold {
			return r.EnvSteps, r.WallSeconds, true
		}
	}
	return 0, 0, false
}

// PassReturn is the return SB3's PPO reaches on HalfCheetah with continuous actions at 1M steps
// (issue 51): the report says where each run first passes it.
const PassReturn = 1423

// PairedSection is the report's comparison of every variant with the baseline's runs (those for
// which isBase is true) on the seeds they share, per env and grid: the per-seed table of
// last-20% returns and their paired differences, each arm's and the difference's Interval, and
// whether the difference's interval lies above 0 (a win by PROTOCOL.md's rule). Each run's wall
// time per 1M env steps and where its 20-iteration moving mean first passes PassReturn are listed
// too. Empty when no baseline run is among runs.
func PairedSection(runs []Record, isBase func(Record) bool) string {
	var b strings.Builder
	for _, g := range curveGroups(runs) {
		fields := settings(g.runs)
		base := map[int64]Summary{}
		variants := map[variant][]Summary{}
		var order []variant
		for _, r := range g.runs {
			s := Summarise(r)
			if isBase(r) {
				base[r.Cfg.Seed] = s
				continue
			}
			v := variantOf(r.Cfg, fields)
			if _, ok := variants[v]; !ok {
				order = append(order, v)
			}
			variants[v] = append(variants[v], s)
		}
		if len(base) == 0 {
			continue
		}
		var baseCfg config.Config // the baseline's runs differ by their seed alone
		for _, bs := range base {
			baseCfg = bs.Record.Cfg
			break
		}
		fmt.Fprintf(&b, "\n## Paired against the baseline: %s, grid %d\n\n", g.env, g.grid)
		fmt.Fprintf(&b, "The baseline is %s. Per seed, the mean return over the last 20%% of each run's env steps; "+
			"std is the sample std (n − 1), the interval the 95%% Student-t interval of the mean. "+
			"\"passes 1,423\": env steps (wall time) where the 20-iteration moving mean return first reaches it (SB3 PPO's continuous-action return at 1M steps).\n", baseNames(base))
		for _, v := range order {
			b.WriteString(pairedTable(v, differences(baseCfg, variants[v][0].Record.Cfg), base, variants[v]))
		}
	}
	return b.String()
}

func baseNames(base map[int64]Summary) string {
	var names []string
	for _, s := range base {
		names = append(names, filepath.Base(s.Record.Dir))
	}
	slices.Sort(names)
	return "`" + strings.Join(names, "`, `") + "`"
}

// differences names the config fields where c departs from base ("name value, ..." in the
// fields' JSON names), leaving out the seed and the run's length.
func differences(base, c config.Config) string {
	bf, cf := configFields(base), configFields(c)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(cf)) {
		if k == "seed" || k == "iters" || cf[k] == bf[k] {
			continue
		}
		out = append(out, k+" "+cf[k])
	}
	for _, k := range slices.Sorted(maps.Keys(bf)) {
		if _, ok := cf[k]; !ok && k != "seed" && k != "iters" {
			out = append(out, k+" off")
		}
	}
	return strings.Join(out, ", ")
}

// pairedTable is one variant's table against the baseline; diff names how it departs from it.
func pairedTable(v variant, diff string, base map[int64]Summary, cand []Summary) string {
	slices.SortFunc(cand, func(a, b Summary) int { return cmp.Compare(a.Record.Cfg.Seed, b.Record.Cfg.Seed) })
	var b strings.Builder
	fmt.Fprintf(&b, "\n### %s α %g: %s\n\n", v.algo, v.alpha, orDash(diff))
	b.WriteString("| seed | baseline | this arm | difference | this arm: wall s per 1M steps | this arm: passes 1,423 |\n|---|---|---|---|---|---|\n")
	var xs, ys, ds []float64
	for _, c := range cand {
		seed := c.Record.Cfg.Seed
		bs, ok := base[seed]
		bv, d := math.NaN(), math.NaN()
		if ok {
			bv, d = bs.Last20Return, c.Last20Return-bs.Last20Return
			xs, ys, ds = append(xs, bv), append(ys, c.Last20Return), append(ds, d)
		}
		pass := "never"
		if steps, wall, ok := PassThreshold(c.Record.Rows, PassReturn, 20); ok {
			pass = fmt.Sprintf("%d (%.0f s)", steps, wall)
		}
		perM := math.NaN()
		if c.EnvSteps > 0 {
			perM = c.WallSeconds * 1e6 / float64(c.EnvSteps)
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |\n", seed, numf("%.0f", bv), numf("%.0f", c.Last20Return), numf("%+.0f", d), numf("%.0f", perM), pass)
	}
	bi, ci, di := SampleInterval(xs), SampleInterval(ys), SampleInterval(ds)
	fmt.Fprintf(&b, "| **%d paired seeds** | %s | %s | %s | | |\n", len(ds), bi, ci, di)
	verdict := "no win: the difference's 95% interval reaches 0 or below"
	switch {
	case len(ds) < 2:
		verdict = "no verdict: fewer than two paired seeds"
	case di.Lower > 0:
		verdict = "**a win**: the difference's 95% interval lies above 0"
	}
	fmt.Fprintf(&b, "\nBetter in %d of %d seeds; %s.\n", countPositive(ds), len(ds), verdict)
	return b.String()
}

func countPositive(x []float64) int {
	n := 0
	for _, v := range x {
		if v > 0 {
			n++
		}
	}
	return n
}
