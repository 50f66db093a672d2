package analysis

import (
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/provenance"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
)

// writeRun writes a run directory with n rows whose return is ret(i) (NaN before the first
// completed episode) and max-probability 0.5, without diagnostics.
func writeRun(t *testing.T, dir string, algo config.Algo, seed int64, n int, ret func(i int) float64) {
	t.Helper()
	writeRunWith(t, dir, algo, seed, n, ret, nil, func(i int) runstore.Diagnostics { return runstore.NoDiagnostics() })
}

// writeRunWith is writeRun with edit applied to the config and diag(i) as row i's diagnostics.
func writeRunWith(t *testing.T, dir string, algo config.Algo, seed int64, n int, ret func(i int) float64, edit func(*config.Config), diag func(i int) runstore.Diagnostics) {
	t.Helper()
	c := config.Default()
	c.Env, c.Net, c.Grid, c.Algo, c.Seed = "HalfCheetah-v5", config.NetMLP, 3, algo, seed
	if edit != nil {
		edit(&c)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteFile(filepath.Join(dir, runstore.ConfigFile)); err != nil {
		t.Fatal(err)
	}
	var rows []runstore.Row
	for i := range n {
		g := math.NaN()
		if i%5 == 0 {
			g = float64(i)
		}
		rows = append(rows, runstore.Row{Iteration: i, EnvSteps: int64(100 * (i + 1)), WallSeconds: float64(i), MeanReward: ret(i),
			GreedyReward: g, MaxProb: 0.5, Support: 3, Loss: 1, ReplayLoss: 1, Diagnostics: diag(i)})
	}
	f, err := os.Create(filepath.Join(dir, runstore.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := runstore.WriteMetrics(f, rows); err != nil {
		t.Fatal(err)
	}
}

func TestReportFiguresAndTable(t *testing.T) {
	root := t.TempDir()
	ramp := func(i int) float64 {
		if i < 10 {
			return math.NaN()
		}
		return float64(i)
	}
	writeRun(t, filepath.Join(root, "a"), config.AlgoSparse, 1, 40, ramp)
	writeRun(t, filepath.Join(root, "b"), config.AlgoSparse, 2, 40, func(i int) float64 { return ramp(i) + 2 })
	writeRun(t, filepath.Join(root, "c"), config.AlgoSoft, 1, 20, ramp) // unfinished: fewer rows
	runs, err := LoadRecords([]string{filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c")})
	if err != nil {
		t.Fatal(err)
	}
	s := Summarise(runs[0])
	// The last tenth of 40 rows is rows 36..39: mean return 37.5.
	if s.FinalReturn != 37.5 || s.LastGreedy != 35 || s.BestGreedy != 35 || s.EnvSteps != 4000 || s.FinalMaxProb != 0.5 {
		t.Errorf("summary %+v", s)
	}
	files, err := CurveFigures(root, runs)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("figures %v, want a return and a max-prob figure", files)
	}
	for _, f := range files {
		if st, err := os.Stat(filepath.Join(root, f)); err != nil || st.Size() == 0 {
			t.Errorf("figure %s: %v", f, err)
		}
	}
	md := CurveTable(runs)
	// Sparse: final (last 4 rows) 37.5 and 39.5, last 20% (rows 32..39) 35.5 and 37.5; soft (20 rows): 18.5, and 17.5 over rows 16..19.
	for _, want := range []string{"| HalfCheetah-v5 | 3 | sparse | 0.05 | - | 2 | 38.50 ± 1.00 | 36.50 ± 1.00 |", "| HalfCheetah-v5 | 3 | soft | 0.05 | - | 1 | 18.50 ± 0.00 | 17.50 ± 0.00 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
	if _, err := LoadRecords([]string{filepath.Join(root, "missing")}); err == nil {
		t.Error("a missing run: no error")
	}
	// Runs without a run.json naming a clean, stamped binary are marked; one that has it is not.
	if !strings.Contains(md, "| 1 † |") || !strings.Contains(md, "† The run's binary carries no build stamp") {
		t.Errorf("the runs without provenance are not marked:\n%s", md)
	}
	s0 := provenance.Session{FromIteration: 0, BinaryCommit: "0123456789abcdef", BinaryDirty: new(false)}
	for _, d := range []string{"a", "b", "c"} {
		if err := provenance.Append(filepath.Join(root, d), s0); err != nil {
			t.Fatal(err)
		}
	}
	if md := CurveTable(runs); strings.Contains(md, "†") {
		t.Errorf("runs from a clean, stamped binary are marked:\n%s", md)
	}
}

// The final weight is the mean logged α over the last tenth of the rows; a file written before
// α was logged falls back to the configured weight when that weight is fixed, and to none when a
// schedule or the automatic weight moved it.
func TestSummaryFinalAlpha(t *testing.T) {
	rows := func(alpha func(i int) float64) []runstore.Row {
		var rs []runstore.Row
		for i := range 20 {
			rs = append(rs, runstore.Row{Iteration: i, EnvSteps: int64(100 * (i + 1)), MeanReward: 1, Alpha: alpha(i)})
		}
		return rs
	}
	logged := func(i int) float64 { return 1 + float64(i) } // last tenth: rows 18, 19 → 19.5
	unlogged := func(int) float64 { return math.NaN() }
	fixed := config.Default()
	fixed.Alpha = 0.3
	auto := fixed
	auto.AlphaAuto = true
	schedule := fixed
	schedule.AlphaStart, schedule.AlphaDecay = 3, 0.9
	for _, tc := range []struct {
		name string
		cfg  config.Config
		rows []runstore.Row
		want float64
	}{
		{"logged, automatic", auto, rows(logged), 19.5},
		{"logged, fixed", fixed, rows(logged), 19.5},
		{"unlogged, fixed: the configured weight", fixed, rows(unlogged), 0.3},
		{"unlogged, automatic: unknown", auto, rows(unlogged), math.NaN()},
		{"unlogged, schedule: unknown", schedule, rows(unlogged), math.NaN()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Summarise(Record{Cfg: tc.cfg, Rows: tc.rows}).FinalAlpha
			if got != tc.want && !(math.IsNaN(got) && math.IsNaN(tc.want)) {
				t.Errorf("final alpha %g, want %g", got, tc.want)
			}
		})
	}
	md := CurveTable([]Record{{Cfg: auto, Rows: rows(logged)}})
	if !strings.Contains(md, "| 19.5 |") || !strings.Contains(md, "| 19.5 ± 0 |") {
		t.Errorf("table lacks the final alpha 19.5 in the run and the variant rows:\n%s", md)
	}
}

// The runs' differing settings make variants: two seeds at the default value scale form one
// variant, named without it (the most common value), a third run at another scale its own, named
// by it; the diagnostics add the value and clip figures.
func TestReportVariantsAndDiagnostics(t *testing.T) {
	root := t.TempDir()
	ret := func(i int) float64 { return float64(i) }
	diag := func(i int) runstore.Diagnostics {
		return runstore.Diagnostics{ValueMean: -float64(i), ReturnDiscounted: -40, ClipScale: 0.01, GradNormPolicy: 900, GradNormValue: 100}
	}
	scaled := func(c *config.Config) { c.ValueScale = 10 }
	writeRunWith(t, filepath.Join(root, "a"), config.AlgoSparse, 1, 20, ret, nil, diag)
	writeRunWith(t, filepath.Join(root, "b"), config.AlgoSparse, 2, 20, ret, nil, diag)
	writeRunWith(t, filepath.Join(root, "c"), config.AlgoSparse, 1, 20, ret, scaled, diag)
	runs, err := LoadRecords([]string{filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c")})
	if err != nil {
		t.Fatal(err)
	}
	if got := settings(runs); len(got) != 1 || got["value_scale"] != "1" {
		t.Errorf("settings %v, want value_scale with its mode 1", got)
	}
	files, err := CurveFigures(root, runs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"HalfCheetah-v5-grid3-return.png", "HalfCheetah-v5-grid3-maxprob.png", "HalfCheetah-v5-grid3-value.png", "HalfCheetah-v5-grid3-clip.png"}
	if !slices.Equal(files, want) {
		t.Errorf("figures %v, want %v", files, want)
	}
	md := CurveTable(runs)
	for _, row := range []string{"| sparse | 0.05 | - | 2 |", "| sparse | 0.05 | value-scale 10 | 1 |"} {
		if !strings.Contains(md, row) {
			t.Errorf("table lacks the variant row %q:\n%s", row, md)
		}
	}
}

// A band averages each run over buckets of iterations, then takes the mean and range over runs.
func TestBandBuckets(t *testing.T) {
	mk := func(vals ...float64) Record {
		var rows []runstore.Row
		for i, v := range vals {
			rows = append(rows, runstore.Row{Iteration: i, EnvSteps: int64(100 * (i + 1)), MeanReward: v})
		}
		return Record{Rows: rows}
	}
	b := curveBand([]Record{mk(1, 3, 5, math.NaN()), mk(3, 5, 7, 9)}, func(_ config.Config, r runstore.Row) float64 { return r.MeanReward }, 2)
	// Record 1: buckets (1+3)/2 = 2 and 5; run 2: 4 and 8. Means 3 and 6.5, ranges [2,4] and [5,8].
	if !slices.Equal(b.Mean, []float64{3, 6.5}) || !slices.Equal(b.Lo, []float64{2, 5}) || !slices.Equal(b.Hi, []float64{4, 8}) ||
		!slices.Equal(b.X, []float64{200, 400}) {
		t.Errorf("band %+v", b)
	}
}

func TestUntil(t *testing.T) {
	r := Record{Rows: []runstore.Row{{EnvSteps: 100}, {EnvSteps: 200}, {EnvSteps: 300}}}
	for _, tc := range []struct {
		steps int64
		want  int
	}{{50, 0}, {200, 2}, {1000, 3}} {
		if got := Until([]Record{r}, tc.steps)[0].Rows; len(got) != tc.want {
			t.Errorf("until %d: %d rows, want %d", tc.steps, len(got), tc.want)
		}
	}
	if len(r.Rows) != 3 {
		t.Error("Until changed its argument")
	}
}

// A field a config leaves out when it is zero (explore, omitempty) still tells variants apart:
// absent counts as its own value, and a run that departs from a mode set elsewhere says "off".
func TestSettingsSeeOmittedFields(t *testing.T) {
	exploring := config.Default()
	exploring.Explore = 0.3
	plain := config.Default()
	runs := []Record{{Cfg: exploring}, {Cfg: exploring}, {Cfg: plain}}
	modes := settings(runs)
	if modes["explore"] != "0.3" {
		t.Fatalf("settings %v, want explore with its mode 0.3", modes)
	}
	if got := variantOf(plain, modes).settings; got != "explore off" {
		t.Errorf("plain run's settings %q, want %q", got, "explore off")
	}
	if got := variantOf(exploring, modes).settings; got != "" {
		t.Errorf("exploring run's settings %q, want none", got)
	}
}

// Runs that mix weight controls each name their own (fixed, automatic or the schedule), whatever
// the majority, and the control's flags are not listed one by one; runs that share one name none.
func TestSettingsNameTheWeightControl(t *testing.T) {
	auto, fixed, decay := config.Default(), config.Default(), config.Default()
	auto.AlphaAuto = true
	decay.AlphaStart, decay.AlphaDecay = 10, 0.9
	unified := auto
	unified.Form = config.FormUnified
	modes := settings([]Record{{Cfg: auto}, {Cfg: auto}, {Cfg: fixed}, {Cfg: decay}, {Cfg: unified}})
	for _, tc := range []struct {
		cfg  config.Config
		want string
	}{
		{auto, "automatic weight"}, {fixed, "fixed weight"}, {decay, "from 10, ×0.9/100 it"}, {unified, "automatic weight, form unified"},
	} {
		if got := variantOf(tc.cfg, modes).settings; got != tc.want {
			t.Errorf("settings %q, want %q", got, tc.want)
		}
	}
	same := settings([]Record{{Cfg: auto}, {Cfg: auto}})
	if got := variantOf(auto, same).settings; got != "" {
		t.Errorf("runs of one control: settings %q, want none", got)
	}
}

// The best window is the best mean return over any width env steps, sliding by one row; it
// counts once the run has taken width steps, and rows without a return (no episode ended) are left
// out of a window's mean.
func TestBestWindow(t *testing.T) {
	rows := func(n int, ret func(i int) float64) []runstore.Row {
		out := make([]runstore.Row, n)
		for i := range out {
			out[i] = runstore.Row{Iteration: i, EnvSteps: int64(i+1) * 100, MeanReward: ret(i)}
		}
		return out
	}
	ramp := func(i int) float64 {
		if i < 10 {
			return math.NaN()
		}
		return float64(i)
	}
	cases := []struct {
		name  string
		rows  []runstore.Row
		width int64
		want  float64
	}{
		{"rising: the last 10 rows", rows(40, ramp), 1000, 34.5},
		{"a peak between aligned windows", rows(30, func(i int) float64 { return -math.Abs(float64(i) - 10) }), 1000, -2.5},
		{"rows without a return left out", rows(12, ramp), 1000, 10.5},
		{"fewer steps than a window", rows(9, ramp), 1000, math.NaN()},
		{"no return yet", rows(10, ramp), 1000, math.NaN()},
	}
	for _, c := range cases {
		got := bestWindow(c.rows, c.width)
		if got != c.want && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("%s: best window %v, want %v", c.name, got, c.want)
		}
	}
}

// Beyond maxLegendBands variants a figure draws a panel per variant (a grid taller than one plot)
// instead of bands whose legend would cover the data.
func TestManyVariantsGetPanels(t *testing.T) {
	height := func(variants int) int {
		root := t.TempDir()
		var dirs []string
		for v := range variants {
			d := filepath.Join(root, fmt.Sprintf("v%d", v))
			writeRunWith(t, d, config.AlgoSparse, 1, 30, func(i int) float64 { return float64(i + v) },
				func(c *config.Config) { c.LearningRate = 1e-4 * float64(v+1) }, func(int) runstore.Diagnostics { return runstore.NoDiagnostics() })
			dirs = append(dirs, d)
		}
		runs, err := LoadRecords(dirs)
		if err != nil {
			t.Fatal(err)
		}
		files, err := CurveFigures(root, runs)
		if err != nil || len(files) == 0 {
			t.Fatalf("%d variants: %v %v", variants, files, err)
		}
		fh, err := os.Open(filepath.Join(root, files[0]))
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		cfg, err := png.DecodeConfig(fh)
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Height
	}
	if few, many := height(3), height(maxLegendBands+2); many <= few {
		t.Errorf("%d variants drew a figure %d px high, 3 variants %d: want panels, taller", maxLegendBands+2, many, few)
	}
}
