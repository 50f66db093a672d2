// Package report gathers long-episode runs (HalfCheetah and other Gymnasium envs) into the
// paper's continuous-control figures and a table: per env and action grid, the mean return of
// completed episodes and the mean probability of the most likely action against env steps, sparse
// and soft PCL on one figure (the mean over seeds over a min-max band), and per run its final
// return, greedy return, max-probability, env steps and wall time. Whatever subset of the runs has
// finished can be reported; unfinished runs report where they stand.
package report

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/plot"
	"github.com/sparsepcl/sparsepcl/agent/train"
)

// Run is one run directory's config and metrics.
type Run struct {
	Dir  string
	Cfg  config.Config
	Rows []train.Row
}

// Load reads the config and metrics of each run directory.
func Load(dirs []string) ([]Run, error) {
	var runs []Run
	for _, d := range dirs {
		cfg, err := config.ReadFile(filepath.Join(d, train.ConfigFile))
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		rows, err := train.ReadMetrics(filepath.Join(d, train.MetricsFile))
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		runs = append(runs, Run{Dir: d, Cfg: cfg, Rows: rows})
	}
	return runs, nil
}

// Summary is one run's final figures: final values are means over the last tenth of its rows.
type Summary struct {
	Run
	FinalReturn, FinalMaxProb, FinalSupport float64
	LastGreedy, BestGreedy                  float64
	EnvSteps                                int64
	WallSeconds                             float64
}

// Summarise computes r's final figures.
func Summarise(r Run) Summary {
	s := Summary{Run: r, FinalReturn: math.NaN(), FinalMaxProb: math.NaN(), FinalSupport: math.NaN(), LastGreedy: math.NaN(), BestGreedy: math.NaN()}
	if len(r.Rows) == 0 {
		return s
	}
	k := max(1, len(r.Rows)/10)
	tail := r.Rows[len(r.Rows)-k:]
	s.FinalReturn = meanOf(tail, func(x train.Row) float64 { return x.MeanReward })
	s.FinalMaxProb = meanOf(tail, func(x train.Row) float64 { return x.MaxProb })
	s.FinalSupport = meanOf(tail, func(x train.Row) float64 { return x.Support })
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

// meanOf is the mean of the finite values of f over rows (NaN if none).
func meanOf(rows []train.Row, f func(train.Row) float64) float64 {
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

// group is the runs of one env and grid.
type group struct {
	env  string
	grid int
	runs []Run
}

func (g group) name() string {
	if g.grid > 0 {
		return fmt.Sprintf("%s-grid%d", g.env, g.grid)
	}
	return g.env
}

func groups(runs []Run) []group {
	var gs []group
	for _, r := range runs {
		i := slices.IndexFunc(gs, func(g group) bool { return g.env == r.Cfg.Env && g.grid == r.Cfg.Grid })
		if i < 0 {
			gs = append(gs, group{env: r.Cfg.Env, grid: r.Cfg.Grid})
			i = len(gs) - 1
		}
		gs[i].runs = append(gs[i].runs, r)
	}
	slices.SortFunc(gs, func(a, b group) int { return cmp.Or(cmp.Compare(a.env, b.env), cmp.Compare(a.grid, b.grid)) })
	return gs
}

// variant is one algorithm at one weight and learning rate: the runs a band averages over seeds.
type variant struct {
	algo      string
	alpha, lr float64
}

func (v variant) String() string {
	return fmt.Sprintf("%s alpha=%g lr=%g", v.algo, v.alpha, v.lr)
}

// variantColours: sparse runs in blues, soft in reds and oranges, Tsallis in greens; four shades
// each, so that a one-seed search over four weights or learning rates has no two bands alike.
var variantColours = map[string][]color.NRGBA{
	config.AlgoSparse:  {{R: 0x1f, G: 0x77, B: 0xb4, A: 255}, {R: 0x17, G: 0xbe, B: 0xcf, A: 255}, {R: 0x94, G: 0x67, B: 0xbd, A: 255}, {R: 0x39, G: 0x3b, B: 0x79, A: 255}},
	config.AlgoSoft:    {{R: 0xd6, G: 0x27, B: 0x28, A: 255}, {R: 0xff, G: 0x7f, B: 0x0e, A: 255}, {R: 0x8c, G: 0x56, B: 0x4b, A: 255}, {R: 0xe3, G: 0x77, B: 0xc2, A: 255}},
	config.AlgoTsallis: {{R: 0x2c, G: 0xa0, B: 0x2c, A: 255}, {R: 0xbc, G: 0xbd, B: 0x22, A: 255}, {R: 0x00, G: 0x6d, B: 0x2c, A: 255}},
}

// Figures writes, per env and grid, <name>-return.png and <name>-maxprob.png into out and returns
// their file names. Each algorithm, weight and learning rate is one band over its seeds.
func Figures(out string, runs []Run) ([]string, error) {
	var files []string
	for _, g := range groups(runs) {
		byVariant := map[variant][]Run{}
		var variants []variant
		for _, r := range g.runs {
			v := variant{r.Cfg.Algo, r.Cfg.Alpha, r.Cfg.LearningRate}
			if _, ok := byVariant[v]; !ok {
				variants = append(variants, v)
			}
			byVariant[v] = append(byVariant[v], r)
		}
		slices.SortFunc(variants, func(a, b variant) int {
			return cmp.Or(-cmp.Compare(a.algo, b.algo), cmp.Compare(a.alpha, b.alpha), cmp.Compare(a.lr, b.lr))
		})
		colour := map[variant]color.NRGBA{}
		used := map[string]int{}
		for _, v := range variants {
			pal := variantColours[v.algo]
			if len(pal) == 0 {
				pal = variantColours[config.AlgoTsallis]
			}
			colour[v] = pal[used[v.algo]%len(pal)]
			used[v.algo]++
		}
		figs := []struct {
			suffix, what, y string
			value           func(train.Row) float64
		}{
			{"return", "average return", "undiscounted return of completed episodes", func(r train.Row) float64 { return r.MeanReward }},
			{"maxprob", "probability of the most likely action", "mean max_a π(a|s) over the last 1000 steps", func(r train.Row) float64 { return r.MaxProb }},
		}
		// Legends name what differs between bands; the title says what they share.
		var algos []string
		lrs := map[float64]bool{}
		seedsLo, seedsHi := len(g.runs), 0
		for _, v := range variants {
			algos, lrs[v.lr] = append(algos, v.algo), true
			seedsLo, seedsHi = min(seedsLo, len(byVariant[v])), max(seedsHi, len(byVariant[v]))
		}
		for _, f := range figs {
			var bands []plot.Band
			for _, v := range variants {
				rs := byVariant[v]
				b := band(rs, f.value)
				b.Name = plot.AlgoLabel(v.algo, v.alpha, rs[0].Cfg.TsallisQ)
				if len(lrs) > 1 {
					b.Name += fmt.Sprintf(", lr %g", v.lr)
				}
				if seedsLo != seedsHi {
					b.Name += fmt.Sprintf(" (%d seeds)", len(rs))
				}
				b.Colour = colour[v]
				bands = append(bands, b)
			}
			title := fmt.Sprintf("%s: %s\n%s, %s", strings.TrimSpace(g.env+" "+plot.SizeLabel(0, 0, g.grid)), plot.AlgosLabel(algos), f.what, plot.SeedsLabel(seedsLo, seedsHi))
			file := fmt.Sprintf("%s-%s.png", g.name(), f.suffix)
			if err := plot.Bands(filepath.Join(out, file), title, "env steps", f.y, bands); err != nil {
				return nil, fmt.Errorf("report: %w", err)
			}
			files = append(files, file)
		}
	}
	return files, nil
}

// band is the mean and min-max over runs of value at each iteration (finite values only), placed
// at that iteration's env steps.
func band(runs []Run, value func(train.Row) float64) plot.Band {
	type acc struct{ sum, lo, hi, n, x float64 }
	byIt := map[int]*acc{}
	for _, r := range runs {
		for _, row := range r.Rows {
			v := value(row)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			a := byIt[row.Iteration]
			if a == nil {
				a = &acc{lo: v, hi: v, x: float64(row.EnvSteps)}
				byIt[row.Iteration] = a
			}
			a.sum, a.n, a.lo, a.hi = a.sum+v, a.n+1, math.Min(a.lo, v), math.Max(a.hi, v)
		}
	}
	its := make([]int, 0, len(byIt))
	for it := range byIt {
		its = append(its, it)
	}
	slices.Sort(its)
	var b plot.Band
	for _, it := range its {
		a := byIt[it]
		b.X, b.Mean = append(b.X, a.x), append(b.Mean, a.sum/a.n)
		b.Lo, b.Hi = append(b.Lo, a.lo), append(b.Hi, a.hi)
	}
	return b
}

// Table is a markdown table of every run's final figures, then one line per env, grid and
// algorithm with the mean ± std over its seeds.
func Table(runs []Run) string {
	var b strings.Builder
	b.WriteString("| env | grid | algo | alpha | lr | seed | iterations | env steps | wall s | final return | last greedy | best greedy | final max-prob | final support |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	type key struct {
		env, algo string
		grid      int
		alpha, lr float64
	}
	agg := map[key][]Summary{}
	var keys []key
	for _, r := range runs {
		s := Summarise(r)
		c := r.Cfg
		fmt.Fprintf(&b, "| %s | %d | %s | %g | %g | %d | %d | %d | %.0f | %s | %s | %s | %s | %s |\n",
			c.Env, c.Grid, c.Algo, c.Alpha, c.LearningRate, c.Seed, len(r.Rows), s.EnvSteps, s.WallSeconds,
			num("%.1f", s.FinalReturn), num("%.1f", s.LastGreedy), num("%.1f", s.BestGreedy), num("%.3f", s.FinalMaxProb), num("%.1f", s.FinalSupport))
		k := key{c.Env, c.Algo, c.Grid, c.Alpha, c.LearningRate}
		if _, ok := agg[k]; !ok {
			keys = append(keys, k)
		}
		agg[k] = append(agg[k], s)
	}
	b.WriteString("\n| env | grid | algo | alpha | lr | seeds | final return (mean ± std) | last greedy (mean ± std) | final max-prob (mean ± std) |\n|---|---|---|---|---|---|---|---|---|\n")
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.env, b.env), cmp.Compare(a.grid, b.grid), -cmp.Compare(a.algo, b.algo), cmp.Compare(a.alpha, b.alpha), cmp.Compare(a.lr, b.lr))
	})
	for _, k := range keys {
		ss := agg[k]
		col := func(f func(Summary) float64) string {
			var xs []float64
			for _, s := range ss {
				if v := f(s); !math.IsNaN(v) {
					xs = append(xs, v)
				}
			}
			m, sd := meanStd(xs)
			return num("%.2f", m) + " ± " + num("%.2f", sd)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %g | %g | %d | %s | %s | %s |\n", k.env, k.grid, k.algo, k.alpha, k.lr, len(ss),
			col(func(s Summary) float64 { return s.FinalReturn }), col(func(s Summary) float64 { return s.LastGreedy }),
			col(func(s Summary) float64 { return s.FinalMaxProb }))
	}
	return b.String()
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

func num(format string, x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf(format, x)
}
