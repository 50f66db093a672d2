package analysis

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sparsepcl/sparsepcl/agent/runstore"
)

// The "versus" table puts arms side by side on the same seeds at their whole budget and at equal
// wall time: the first arm is the reference, and every other run is also read as it stood when it
// had run as long as the reference's run of the same seed. An arm's runs may be pcl's own run
// directories or another program's (result.json naming the seed, and a metrics.csv of pcl's
// per-iteration rows with at least env_steps, wall_seconds and mean_reward): scripts/ppo-grid's
// SB3 PPO runs are the first such.

// curve is what the versus table reads of a run: its seed and its per-iteration return by env
// steps and wall time.
type curve struct {
	seed int64
	rows []runstore.Row
}

// loadCurves reads the runs of a, ordered by seed.
func loadCurves(root string, a ArmSpec) ([]curve, error) {
	dirs, err := a.Dirs(root)
	if err != nil {
		return nil, err
	}
	out := make([]curve, len(dirs))
	for i, d := range dirs {
		if out[i], err = readCurve(d); err != nil {
			return nil, fmt.Errorf("arm %q: %w", a.Label, err)
		}
	}
	slices.SortFunc(out, func(x, y curve) int { return cmp.Compare(x.seed, y.seed) })
	return out, nil
}

// readCurve reads a pcl run directory, or another program's run with a result.json.
func readCurve(dir string) (curve, error) {
	if _, err := os.Stat(filepath.Join(dir, runstore.ConfigFile)); err == nil {
		recs, err := LoadRecords([]string{dir})
		if err != nil {
			return curve{}, err
		}
		return curve{seed: recs[0].Cfg.Seed, rows: recs[0].Rows}, nil
	}
	data, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		return curve{}, fmt.Errorf("%s: neither a pcl run (%s) nor another program's (result.json): %w", dir, runstore.ConfigFile, err)
	}
	var res struct {
		Seed *int64 `json:"seed"`
	}
	if err := json.Unmarshal(data, &res); err != nil || res.Seed == nil {
		return curve{}, fmt.Errorf("%s: result.json names no seed (%v)", dir, err)
	}
	rows, err := readForeignMetrics(filepath.Join(dir, runstore.MetricsFile))
	if err != nil {
		return curve{}, err
	}
	return curve{seed: *res.Seed, rows: rows}, nil
}

// readForeignMetrics reads env_steps, wall_seconds and mean_reward, by header name, from another
// program's metrics.csv; the other columns of a Row are NaN.
func readForeignMetrics(path string) ([]runstore.Row, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("metrics: %s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("metrics: %s: no header", path)
	}
	names := []string{"env_steps", "wall_seconds", "mean_reward"}
	col := make([]int, len(names))
	for i, n := range names {
		if col[i] = slices.Index(recs[0], n); col[i] < 0 {
			return nil, fmt.Errorf("metrics: %s: no column %q", path, n)
		}
	}
	rows := make([]runstore.Row, 0, len(recs)-1)
	for line, rec := range recs[1:] {
		var v [3]float64
		for i, c := range col {
			if v[i], err = strconv.ParseFloat(rec[c], 64); err != nil {
				return nil, fmt.Errorf("metrics: %s:%d: %s: %w", path, line+2, names[i], err)
			}
		}
		nan := math.NaN()
		rows = append(rows, runstore.Row{Iteration: line, EnvSteps: int64(v[0]), WallSeconds: v[1], MeanReward: v[2],
			GreedyReward: nan, Loss: nan, ReplayLoss: nan, Support: nan, MaxProb: nan, GradNorm: nan, Alpha: nan})
	}
	return rows, nil
}

// last20 is the mean return over the last fifth of rows (Summary.Last20Return's rule).
func last20(rows []runstore.Row) float64 {
	if len(rows) == 0 {
		return math.NaN()
	}
	return meanOf(rows[len(rows)-max(1, len(rows)/5):], func(x runstore.Row) float64 { return x.MeanReward })
}

// until is rows up to wall seconds.
func until(rows []runstore.Row, wall float64) []runstore.Row {
	n := 0
	for n < len(rows) && rows[n].WallSeconds <= wall {
		n++
	}
	return rows[:n]
}

// renderVersus computes the versus table of spec from the runs under root.
func renderVersus(root string, spec TableSpec) (string, error) {
	arms := make([][]curve, len(spec.Arms))
	for i, a := range spec.Arms {
		var err error
		if arms[i], err = loadCurves(root, a); err != nil {
			return "", fmt.Errorf("tables: %s: %w", spec.Name, err)
		}
	}
	return versusTable(spec.Arms, arms)
}

// versusRow is one arm's figures, seed by seed.
type versusRow struct {
	full, atRef    map[int64]float64 // last-20% return at the whole budget and at the reference's wall time
	steps, minutes []float64         // env steps at the reference's wall time; wall minutes of each run
}

// versusFigures reads arm a against the reference's wall time per seed.
func versusFigures(label string, a []curve, ref map[int64]float64) (versusRow, error) {
	r := versusRow{full: map[int64]float64{}, atRef: map[int64]float64{}}
	for _, c := range a {
		w, ok := ref[c.seed]
		if !ok {
			return r, fmt.Errorf("tables: arm %q has a run of seed %d, the reference none", label, c.seed)
		}
		cut := until(c.rows, w)
		r.full[c.seed], r.atRef[c.seed] = last20(c.rows), last20(cut)
		if len(cut) > 0 {
			r.steps = append(r.steps, float64(cut[len(cut)-1].EnvSteps))
		}
		if len(c.rows) > 0 {
			r.minutes = append(r.minutes, c.rows[len(c.rows)-1].WallSeconds/60)
		}
	}
	return r, nil
}

// bySeed is m's values in the order of seeds.
func bySeed(m map[int64]float64, seeds []int64) []float64 {
	out := make([]float64, len(seeds))
	for i, s := range seeds {
		out[i] = m[s]
	}
	return out
}

// pairedText is the mean paired difference of x from the reference's values of the same seeds,
// with its 95% interval.
func pairedText(x, ref map[int64]float64, seeds []int64) string {
	d := make([]float64, len(seeds))
	for i, s := range seeds {
		d[i] = x[s] - ref[s]
	}
	iv := SampleInterval(d)
	return fmt.Sprintf("%s (%s to %s)", signed(iv.Mean), thousands(iv.Lower), thousands(iv.Upper))
}

// versusTable renders the versus kind: a row per arm, the first the reference.
func versusTable(specs []ArmSpec, arms [][]curve) (string, error) {
	ref := map[int64]float64{}
	var seeds []int64
	for _, c := range arms[0] {
		if len(c.rows) > 0 {
			ref[c.seed] = c.rows[len(c.rows)-1].WallSeconds
			seeds = append(seeds, c.seed)
		}
	}
	rows := make([]versusRow, len(arms))
	for i, a := range arms {
		var err error
		if rows[i], err = versusFigures(specs[i].Label, a, ref); err != nil {
			return "", err
		}
		if i > 0 && len(rows[i].full) != len(seeds) {
			return "", fmt.Errorf("tables: arm %q has %d seeds, the reference %d", specs[i].Label, len(rows[i].full), len(seeds))
		}
	}
	var b strings.Builder
	b.WriteString("| arm | seeds | return, last 20% | per seed | minutes a run | at the first row's wall time | env steps by then | paired difference from the first row: whole budget; its wall time |\n|---|---|---|---|---|---|---|---|\n")
	for i, r := range rows {
		full := bySeed(r.full, seeds)
		per := make([]string, len(full))
		for k, x := range full {
			per[k] = thousands(x)
		}
		diff := "–"
		if i > 0 {
			diff = pairedText(r.full, rows[0].full, seeds) + "; " + pairedText(r.atRef, rows[0].atRef, seeds)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", specs[i].Label, len(full), intervalText(SampleInterval(full)),
			strings.Join(per, ", "), rangeText(r.minutes, wholeText), intervalText(SampleInterval(bySeed(r.atRef, seeds))), rangeText(r.steps, thousands), diff)
	}
	b.WriteString("\nMean ± sample std (n − 1) over the seeds, with the 95% Student-t interval of the mean; the return over the last 20% of a run's env steps, at its whole budget and cut where the first row's run of the same seed ended (equal wall time); the paired differences by seed, with their 95% interval. Minutes: each run's wall time, two runs side by side on two cores. Generated from the runs by `pcl tables`.\n")
	return b.String(), nil
}

// rangeText is "lo-hi" of x, each written by f (one value when they are written alike).
func rangeText(x []float64, f func(float64) string) string {
	if len(x) == 0 {
		return "-"
	}
	lo, hi := f(slices.Min(x)), f(slices.Max(x))
	if lo == hi {
		return lo
	}
	return lo + "-" + hi
}

// wholeText is x rounded to a whole number.
func wholeText(x float64) string { return fmt.Sprintf("%.0f", x) }
