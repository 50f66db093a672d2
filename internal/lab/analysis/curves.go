// Long-episode runs (HalfCheetah and other Gymnasium envs) gathered into the paper's
// continuous-control figures and a table: per env and action grid, the mean return of completed
// episodes and the mean probability of the most likely action against env steps, one band per
// variant over its seeds, and per run its final return, greedy return, max-probability, env steps
// and wall time. Whatever subset of the runs has finished can be reported; unfinished runs report
// where they stand. Run directories are read by their config.json, whatever their names.

package analysis

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/provenance"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/internal/lab/plot"
)

// Record is one run directory's config and metrics.
type Record struct {
	Dir  string
	Cfg  config.Config
	Rows []runstore.Row
}

// LoadRecords reads the config and metrics of each run directory.
func LoadRecords(dirs []string) ([]Record, error) {
	var runs []Record
	for _, d := range dirs {
		cfg, err := runstore.Dir(d).Config()
		if err != nil {
			return nil, fmt.Errorf("experiment: %w", err)
		}
		rows, err := runstore.Dir(d).Metrics()
		if err != nil {
			return nil, fmt.Errorf("experiment: %w", err)
		}
		runs = append(runs, Record{Dir: d, Cfg: cfg, Rows: rows})
	}
	return runs, nil
}

// Until returns runs with the rows after envSteps env steps left out: each run as it stood then.
func Until(runs []Record, envSteps int64) []Record {
	out := make([]Record, len(runs))
	for i, r := range runs {
		n := 0
		for n < len(r.Rows) && r.Rows[n].EnvSteps <= envSteps {
			n++
		}
		r.Rows = r.Rows[:n]
		out[i] = r
	}
	return out
}

// WindowSteps is the width of the windows of BestWindow: 100,000 env steps, a tenth of the paper
// stage's budget.
const WindowSteps = 100_000

// Summary is one run's final figures: final values are means over the last tenth of its rows
// (FinalAlpha that of the logged weight, or the configured one for a fixed weight whose file
// predates the alpha column), Last20Return the mean return over the last fifth (the weight
// searches' selection rule), and BestWindow the best mean return over any WindowSteps env steps
// (NaN until the run has taken that many): what a run reached, where the final figures say what
// it kept.
type Summary struct {
	Record
	FinalReturn, FinalMaxProb, FinalSupport float64
	FinalAlpha                              float64
	Last20Return, BestWindow                float64
	LastGreedy, BestGreedy                  float64
	EnvSteps                                int64
	WallSeconds                             float64
}

// Summarise computes r's final figures.
func Summarise(r Record) Summary {
	s := Summary{Record: r, FinalReturn: math.NaN(), FinalMaxProb: math.NaN(), FinalSupport: math.NaN(), FinalAlpha: math.NaN(),
		Last20Return: math.NaN(), BestWindow: math.NaN(), LastGreedy: math.NaN(), BestGreedy: math.NaN()}
	if len(r.Rows) == 0 {
		return s
	}
	k := max(1, len(r.Rows)/10)
	tail := r.Rows[len(r.Rows)-k:]
	s.FinalReturn = meanOf(tail, func(x runstore.Row) float64 { return x.MeanReward })
	s.FinalMaxProb = meanOf(tail, func(x runstore.Row) float64 { return x.MaxProb })
	s.FinalSupport = meanOf(tail, func(x runstore.Row) float64 { return x.Support })
	s.FinalAlpha = meanOf(tail, func(x runstore.Row) float64 { return x.Alpha })
	if math.IsNaN(s.FinalAlpha) && r.Cfg.WeightMode() == config.WeightFixed {
		s.FinalAlpha = r.Cfg.Alpha
	}
	s.Last20Return = meanOf(r.Rows[len(r.Rows)-max(1, len(r.Rows)/5):], func(x runstore.Row) float64 { return x.MeanReward })
	s.BestWindow = bestWindow(r.Rows, WindowSteps)
	for _, x := range r.Rows {
		if !math.IsNaN(x.GreedyReward) {
			s.LastGreedy = x.GreedyReward
			if math.IsNaN(s.BestGreedy) || x.GreedyReward > s.BestGreedy {
				s.BestGreedy = x.GreedyReward
			}
		}
	}
	last := r.Rows[len(r.Rows)-1]
	s.EnvSteps, s.WallSeconds = last.EnvSteps, last.WallSeconds
	return s
}

// bestWindow is the best mean return over any width env steps of the run: the windows slide by
// one row, each holding the rows whose env steps end within width of its last row's, and count
// once the run has taken width steps. Rows without a finite return (no episode ended) are left
// out of a window's mean. NaN when no window has a return.
func bestWindow(rows []runstore.Row, width int64) float64 {
	best, start, sum, n := math.NaN(), 0, 0.0, 0
	finite := func(x runstore.Row) bool { return !math.IsNaN(x.MeanReward) && !math.IsInf(x.MeanReward, 0) }
	for _, x := range rows {
		if finite(x) {
			sum, n = sum+x.MeanReward, n+1
		}
		for rows[start].EnvSteps <= x.EnvSteps-width {
			if finite(rows[start]) {
				sum, n = sum-rows[start].MeanReward, n-1
			}
			start++
		}
		if x.EnvSteps < width || n == 0 {
			continue
		}
		if m := sum / float64(n); math.IsNaN(best) || m > best {
			best = m
		}
	}
	return best
}

// meanOf is the mean of the finite values of f over rows (NaN if none).
func meanOf(rows []runstore.Row, f func(runstore.Row) float64) float64 {
	sum, n := 0.0, 0
	for _, r := range rows {
		if v := f(r); !math.IsNaN(v) && !math.IsInf(v, 0) {
			sum, n = sum+v, n+1
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// curveGroup is the runs of one env and grid.
type curveGroup struct {
	env  string
	grid int
	runs []Record
}

func (g curveGroup) name() string {
	if g.grid > 0 {
		return fmt.Sprintf("%s-grid%d", g.env, g.grid)
	}
	return g.env
}

func curveGroups(runs []Record) []curveGroup {
	var gs []curveGroup
	for _, r := range runs {
		i := slices.IndexFunc(gs, func(g curveGroup) bool { return g.env == r.Cfg.Env && g.grid == r.Cfg.Grid })
		if i < 0 {
			gs = append(gs, curveGroup{env: r.Cfg.Env, grid: r.Cfg.Grid})
			i = len(gs) - 1
		}
		gs[i].runs = append(gs[i].runs, r)
	}
	slices.SortFunc(gs, func(a, b curveGroup) int { return cmp.Or(cmp.Compare(a.env, b.env), cmp.Compare(a.grid, b.grid)) })
	return gs
}

// runControl reports whether the config field k says how a run is driven, not what it learns:
// runs that differ only in these are seeds of one variant.
func runControl(k string) bool {
	switch k {
	case "seed", "iters", "eval_every", "eval_episodes", "checkpoint_every", "max_loss", "stop_at_threshold", "reward_threshold", "no_threshold":
		return true
	}
	return false
}

// settings are the config fields other than the algorithm and its weight whose values differ
// between runs (what, besides algo and alpha, tells one variant from another), each with its most
// common value among the runs: a variant is named by where it departs from those.
func settings(runs []Record) map[string]string {
	counts := map[string]map[string]int{}
	for _, r := range runs {
		fields := configFields(r.Cfg)
		for _, k := range []string{"alpha_auto", "alpha_start", "alpha_decay"} { // named by weightKey
			delete(fields, k)
		}
		fields[weightKey] = controlName(r.Cfg)
		for k, v := range fields {
			if counts[k] == nil {
				counts[k] = map[string]int{}
			}
			counts[k][v]++
		}
	}
	for _, vs := range counts { // a field left out of some configs (omitempty: alpha_auto) is "" there
		n := 0
		for _, c := range vs {
			n += c
		}
		if n < len(runs) {
			vs[""] += len(runs) - n
		}
	}
	out := map[string]string{}
	for k, vs := range counts {
		if len(vs) < 2 || runControl(k) || k == "algo" || k == "alpha" {
			continue
		}
		mode, n := "", -1
		for v, c := range vs {
			if c > n || (c == n && v < mode) {
				mode, n = v, c
			}
		}
		out[k] = mode
	}
	return out
}

// configFields is cfg's fields by JSON name, each value in its JSON form.
func configFields(cfg config.Config) map[string]string {
	cfg.TrainSteps = cfg.GradientSteps() // 0 is one step: name it so, not "off"
	raw, err := json.Marshal(cfg)
	if err != nil { // a Config always marshals: it holds only finite numbers, strings and bools
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = strings.Trim(string(v), `"`)
	}
	return out
}

// variant is one algorithm at one weight with one value of each differing setting: the runs a
// band averages over seeds.
type variant struct {
	algo     config.Algo
	alpha    float64
	settings string // "name value, ..." of the settings where it departs from the most common
}

// The fields of the weight's control are named together, by controlName, as weightKey: runs that
// mix a fixed, a scheduled and an automatic weight say which each is, not which flags differ.
const weightKey = "weight"

// controlName names how c's weight moves: "fixed weight", "automatic weight" or its schedule.
func controlName(c config.Config) string {
	switch ctl := c.WeightControl(); ctl {
	case "":
		return "fixed weight"
	case config.WeightAuto:
		return "automatic weight"
	default:
		return ctl
	}
}

// variantOf is c's variant: its algorithm, weight, and the settings where it departs from the
// most common values (modes), as "name value" in the order of the names; when the runs mix weight
// controls, every variant names its own first.
func variantOf(c config.Config, modes map[string]string) variant {
	all := configFields(c)
	var parts []string
	if _, mixed := modes[weightKey]; mixed {
		parts = append(parts, controlName(c))
	}
	for _, f := range slices.Sorted(maps.Keys(modes)) {
		if f == weightKey {
			continue
		}
		if v := all[f]; v != modes[f] {
			if v == "" {
				v = "off" // a field the config leaves out when it is zero (omitempty)
			}
			parts = append(parts, strings.ReplaceAll(f, "_", "-")+" "+v)
		}
	}
	return variant{c.Algo, c.Alpha, strings.Join(parts, ", ")}
}

func (v variant) label(q float64) string {
	l := plot.AlgoLabel(v.algo, v.alpha, q)
	if v.settings != "" {
		l += ", " + v.settings
	}
	return l
}

// curveFigure is one of the report's figures: a band per variant of value, and with extra, lighter
// bands of each extra value beside it, each named by its series name.
type curveFigure struct {
	suffix, what, y string
	name            string
	value           func(config.Config, runstore.Row) float64
	extra           []series
	// when, if set, says whether a group of runs gets the figure at all.
	when func([]Record) bool
}

// series is a named value of a run's rows.
type series struct {
	name  string
	value func(config.Config, runstore.Row) float64
}

// curveFigures are the report's figures, in order.
func curveFigures() []curveFigure {
	return []curveFigure{
		{suffix: "return", what: "average return", y: "undiscounted return of completed episodes",
			value: func(_ config.Config, r runstore.Row) float64 { return r.MeanReward }},
		{suffix: "maxprob", what: "probability of the most likely action", y: "mean max_a π(a|s) over the last 1000 steps",
			value: func(_ config.Config, r runstore.Row) float64 { return r.MaxProb }},
		{suffix: "value", what: "V against its targets (trained states of ended episodes)", y: "value", name: "V",
			value: func(_ config.Config, r runstore.Row) float64 { return r.ValueMean },
			extra: []series{
				{"discounted return", func(_ config.Config, r runstore.Row) float64 { return r.ReturnDiscounted }},
				// With a steady policy the regularised value adds the discounted per-step term.
				{"return + term/(1-γ)", func(c config.Config, r runstore.Row) float64 { return r.ReturnDiscounted + r.RegTerm/(1-c.Gamma) }},
			}},
		{suffix: "clip", what: "factor the gradient clip applied (1: did not bind)", y: "clip factor, log10",
			value: func(_ config.Config, r runstore.Row) float64 { return math.Log10(r.ClipScale) }},
		{suffix: "alpha", what: "the regularisation weight", y: "alpha (tau for soft), log10",
			value: func(_ config.Config, r runstore.Row) float64 { return math.Log10(r.Alpha) }, when: alphaMoves},
	}
}

// alphaMoves reports whether some run's weight changed during the run (a schedule or the
// automatic weight): only then is the alpha figure more than flat lines.
func alphaMoves(runs []Record) bool {
	for _, r := range runs {
		for _, row := range r.Rows {
			if !math.IsNaN(row.Alpha) && row.Alpha != r.Cfg.Alpha {
				return true
			}
		}
	}
	return false
}

// maxLegendBands is the most variants one figure draws as bands with a legend; more get a panel
// each (a legend of 19 entries covered the screen's figure).
const maxLegendBands = 8

// CurveFigures writes, per env and grid, <name>-return.png, <name>-maxprob.png and, where the runs
// recorded the diagnostics, <name>-value.png (V against the discounted return) and <name>-clip.png
// into out, and returns their file names. Each variant (algorithm, weight and the settings that
// differ between the runs) is one band over its seeds; more than maxLegendBands variants get a
// panel each.
func CurveFigures(out string, runs []Record) ([]string, error) {

	var files []string
	for _, g := range curveGroups(runs) {
		fields := settings(g.runs)
		byVariant := map[variant][]Record{}
		var variants []variant
		for _, r := range g.runs {
			v := variantOf(r.Cfg, fields)
			if _, ok := byVariant[v]; !ok {
				variants = append(variants, v)
			}
			byVariant[v] = append(byVariant[v], r)
		}
		slices.SortFunc(variants, func(a, b variant) int {
			return cmp.Or(-cmp.Compare(a.algo, b.algo), cmp.Compare(a.alpha, b.alpha), cmp.Compare(a.settings, b.settings))
		})
		colour := map[variant]color.NRGBA{}
		colours := Palette{}
		for _, v := range variants {
			colour[v] = colours.Next(v.algo)
		}
		// Legends name what differs between bands; the title says what they share.
		var algos []config.Algo
		seedsLo, seedsHi := len(g.runs), 0
		for _, v := range variants {
			algos = append(algos, v.algo)
			seedsLo, seedsHi = min(seedsLo, len(byVariant[v])), max(seedsHi, len(byVariant[v]))
		}
		width := bucketWidth(g.runs)
		for _, f := range curveFigures() {
			if f.when != nil && !f.when(g.runs) {
				continue
			}
			title := fmt.Sprintf("%s: %s\n%s, %s", strings.TrimSpace(g.env+" "+plot.SizeLabel(0, 0, g.grid)), plot.AlgosLabel(algos), f.what, plot.SeedsLabel(seedsLo, seedsHi))
			file := fmt.Sprintf("%s-%s.png", g.name(), f.suffix)
			var err error
			// More bands than a legend can name beside the data: a panel each.
			if len(f.extra) > 0 || len(variants) > maxLegendBands {
				err = f.panels(filepath.Join(out, file), title, variants, byVariant, colour, width)
			} else {
				err = f.bands(filepath.Join(out, file), title, variants, byVariant, colour, width, seedsLo != seedsHi)
			}
			if errors.Is(err, errNoData) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("experiment: %w", err)
			}
			files = append(files, file)
		}
	}
	return files, nil
}

// errNoData says a curveFigure had nothing to draw: no run recorded its value.
var errNoData = errors.New("no data")

// bands draws f as one band per variant over its seeds into path.
func (f curveFigure) bands(path, title string, variants []variant, byVariant map[variant][]Record, colour map[variant]color.NRGBA, width int, countSeeds bool) error {
	var bands []plot.Band
	for _, v := range variants {
		rs := byVariant[v]
		b := curveBand(rs, f.value, width)
		if len(b.X) == 0 {
			continue
		}
		b.Name, b.Colour = v.label(rs[0].Cfg.TsallisQ), colour[v]
		if countSeeds {
			b.Name += " (" + seedCount(len(rs)) + ")"
		}
		bands = append(bands, b)
	}
	if len(bands) == 0 {
		return errNoData
	}
	return plot.Bands(path, title, "env steps", f.y, bands)
}

// panels draws f as a grid of panels, one per variant, each with the band of f's value and of
// each extra value (in lighter shades), three panels to a row.
func (f curveFigure) panels(path, title string, variants []variant, byVariant map[variant][]Record, colour map[variant]color.NRGBA, width int) error {
	var rows [][]plot.Panel
	for _, v := range variants {
		rs := byVariant[v]
		b := curveBand(rs, f.value, width)
		if len(b.X) == 0 {
			continue
		}
		b.Name, b.Colour = f.name, colour[v]
		p := plot.Panel{Title: fmt.Sprintf("%s (%s)", v.label(rs[0].Cfg.TsallisQ), seedCount(len(rs))), Bands: []plot.Band{b}}
		c := colour[v]
		for _, e := range f.extra {
			c = lighter(c)
			eb := curveBand(rs, e.value, width)
			eb.Name, eb.Colour = e.name, c
			p.Bands = append(p.Bands, eb)
		}
		if len(rows) == 0 || len(rows[len(rows)-1]) == 3 {
			rows = append(rows, nil)
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], p)
	}
	if len(rows) == 0 {
		return errNoData
	}
	return plot.Grid(path, title, "env steps", f.y, rows)
}

// seedCount is "1 seed" or "n seeds", for legends and panel titles.
func seedCount(n int) string {
	if n == 1 {
		return "1 seed"
	}
	return fmt.Sprintf("%d seeds", n)
}

// lighter mixes c a third of the way to white.
func lighter(c color.NRGBA) color.NRGBA {
	l := func(x uint8) uint8 { return x + (255-x)/3 }
	return color.NRGBA{R: l(c.R), G: l(c.G), B: l(c.B), A: c.A}
}

// bucketWidth is the number of iterations a curveFigure averages into one Point: about 250 points over
// the longest run, so that per-iteration noise does not fill the curveFigure.
func bucketWidth(runs []Record) int {
	n := 0
	for _, r := range runs {
		n = max(n, len(r.Rows))
	}
	return max(1, n/250)
}

// curveBand is the band of value over runs in buckets of width iterations, placed at env steps.
func curveBand(runs []Record, value func(config.Config, runstore.Row) float64, width int) plot.Band {
	seeds := make([][]Point, len(runs))
	for i, r := range runs {
		seeds[i] = make([]Point, len(r.Rows))
		for j, row := range r.Rows {
			seeds[i][j] = Point{It: row.Iteration, X: float64(row.EnvSteps), V: value(r.Cfg, row)}
		}
	}
	return SeedBand(seeds, width)
}

// CurveTable is a markdown table of every run's final figures, then one line per env, grid and variant
// (algorithm, weight and the settings that differ between the runs of the env and grid) with the
// mean ± std over its seeds. "final" is the mean over the last tenth of the iterations, "last 20%"
// over the last fifth, the best window as Summary.BestWindow.
func CurveTable(runs []Record) string {
	var b strings.Builder
	b.WriteString("| env | grid | algo | alpha | settings | seed | iterations | env steps | wall s | final return | return, last 20% | best 100k-step window | last greedy | best greedy | final max-prob | final support | final alpha |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	type key struct {
		env  string
		grid int
		v    variant
	}
	agg := map[key][]Summary{}
	var keys []key
	unpinned := false
	for _, g := range curveGroups(runs) {
		fields := settings(g.runs)
		for _, r := range g.runs {
			s := Summarise(r)
			c := r.Cfg
			v := variantOf(c, fields)
			seed := strconv.FormatInt(c.Seed, 10)
			if f, err := provenance.Read(r.Dir); err != nil || !f.CleanBuild() {
				seed, unpinned = seed+" †", true
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %g | %s | %s | %d | %d | %.0f | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				c.Env, c.Grid, c.Algo, c.Alpha, orDash(v.settings), seed, len(r.Rows), s.EnvSteps, s.WallSeconds,
				numf("%.1f", s.FinalReturn), numf("%.1f", s.Last20Return), numf("%.1f", s.BestWindow), numf("%.1f", s.LastGreedy), numf("%.1f", s.BestGreedy),
				numf("%.3f", s.FinalMaxProb), numf("%.1f", s.FinalSupport), numf("%.3g", s.FinalAlpha))
			k := key{c.Env, c.Grid, v}
			if _, ok := agg[k]; !ok {
				keys = append(keys, k)
			}
			agg[k] = append(agg[k], s)
		}
	}
	if unpinned {
		b.WriteString("\n† The run's binary carries no build stamp, or was built from a dirty tree (its run.json): no commit pins the code that made it.\n")
	}
	b.WriteString("\n| env | grid | algo | alpha | settings | seeds | final return (mean ± std) | return, last 20% (mean ± std) | last greedy (mean ± std) | final max-prob (mean ± std) | final support (mean ± std) | final alpha (mean ± std) |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.env, b.env), cmp.Compare(a.grid, b.grid), -cmp.Compare(a.v.algo, b.v.algo), cmp.Compare(a.v.alpha, b.v.alpha),
			cmp.Compare(a.v.settings, b.v.settings))
	})
	for _, k := range keys {
		ss := agg[k]
		col := func(format string, f func(Summary) float64) string {
			var xs []float64
			for _, s := range ss {
				if v := f(s); !math.IsNaN(v) {
					xs = append(xs, v)
				}
			}
			m, sd := MeanStd(xs)
			return numf(format, m) + " ± " + numf(format, sd)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %g | %s | %d | %s | %s | %s | %s | %s | %s |\n", k.env, k.grid, k.v.algo, k.v.alpha, orDash(k.v.settings), len(ss),
			col("%.2f", func(s Summary) float64 { return s.FinalReturn }), col("%.2f", func(s Summary) float64 { return s.Last20Return }),
			col("%.2f", func(s Summary) float64 { return s.LastGreedy }), col("%.2f", func(s Summary) float64 { return s.FinalMaxProb }),
			col("%.2f", func(s Summary) float64 { return s.FinalSupport }),
			col("%.3g", func(s Summary) float64 { return s.FinalAlpha })) // weights span 0.001 to 10
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// numf formats x, or "-" for NaN.
func numf(format string, x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf(format, x)
}

// ProvenanceSection is the report's section listing each run's provenance (its run.json): the
// last session's summary, then the command of each session.
func ProvenanceSection(dirs []string) string {
	var b strings.Builder
	b.WriteString("\n## Provenance\n\n")
	for _, d := range dirs {
		fmt.Fprintf(&b, "- `%s`: %s\n", d, strings.TrimPrefix(provenance.Line(d), "provenance: "))
		if f, err := provenance.Read(d); err == nil {
			for i, c := range f.Commands() {
				what := "command"
				if i > 0 {
					what = "resumed"
				}
				fmt.Fprintf(&b, "  - %s: `%s`\n", what, c)
			}
		}
	}
	return b.String()
}
