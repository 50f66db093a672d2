package evaluation

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/internal/lab/sweep"
)

// Runs that differ only in their weight's control are separate cells of the report, and a
// weight choice only considers fixed weights.
func TestGroupsByWeightControl(t *testing.T) {
	base := tiny()
	base.AlphaDecay = 0.7
	var cells []sweep.Cell
	for _, ctl := range []sweep.Cell{{Control: "fixed"}, {Control: "auto"}, {Control: "decay", AlphaStart: 0.5}} {
		cells = append(cells, sweep.Cell{Env: "Copy-v0", Base: 5, Algo: "sparse", Alpha: 0.05, Control: ctl.Control, AlphaStart: ctl.AlphaStart})
	}
	m, err := sweep.Plan(sweep.Spec{Base: base, Cells: cells, Seeds: 1, FirstSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var results []RunResult
	for _, r := range m.Runs {
		results = append(results, RunResult{Run: r, Final: math.NaN(), Fraction: math.NaN()})
	}
	groups := Groups(results)
	var got []string
	for _, g := range groups {
		got = append(got, g.Control)
	}
	if want := []string{"", "auto", "from 0.5, ×0.7/100 it"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("groups %q, want %q", got, want)
	}
	for _, g := range groups {
		g.Finished, g.FracMean = 1, 0.5
	}
	groups[1].FracMean = 0.9 // the automatic weight does best, but is no fixed weight to choose
	if ch := ChooseWeights(groups); len(ch) != 0 {
		t.Errorf("choices among one fixed weight and two controls: %v", ch)
	}
}

// cancelAfter is a progress writer that cancels after n progress lines (iterations).
type cancelAfter struct {
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Write(p []byte) (int, error) {
	c.n -= bytes.Count(p, []byte("\riter "))
	if c.n <= 0 {
		c.cancel()
	}
	return len(p), nil
}

// trainingColumns are the metrics that must not depend on interruptions.
func trainingColumns(rows []runstore.Row) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%d %d %v %v %v %v %v %d\n", r.Iteration, r.EnvSteps, r.MeanReward, r.GreedyReward, r.Loss, r.ReplayLoss, r.Support, r.Curriculum)
	}
	return b.String()
}

// TestRunInterruptResumeReport plans a tiny sweep, interrupts run 0 after 3 iterations, resumes it,
// and checks that its metrics equal an uninterrupted run's; then reports with run 1 missing.
func TestRunInterruptResumeReport(t *testing.T) {
	dir, ref := t.TempDir(), t.TempDir()
	m := planTiny(t, dir)
	planTiny(t, ref)
	if _, err := sweep.RunIndex(context.Background(), ref, 0, quiet()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	opts := quiet()
	opts.Progress.W = &cancelAfter{n: 3, cancel: cancel}
	_, err := sweep.RunIndex(ctx, dir, 0, opts)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v, want context.Canceled", err)
	}
	st, err := sweep.Inspect(dir, m.Runs[0])
	if err != nil || st.State != sweep.Partial || st.Iteration != 3 {
		t.Fatalf("after the interruption: %+v, %v; want partial at 3", st, err)
	}
	st, err = sweep.RunIndex(context.Background(), dir, 0, quiet())
	if err != nil || st.State != sweep.Partial {
		t.Fatalf("resume: found %+v, %v", st, err)
	}
	a, _ := runstore.ReadMetrics(filepath.Join(sweep.RunDir(dir, m.Runs[0]), runstore.MetricsFile))
	b, _ := runstore.ReadMetrics(filepath.Join(sweep.RunDir(ref, m.Runs[0]), runstore.MetricsFile))
	if len(a) != 6 || trainingColumns(a) != trainingColumns(b) {
		t.Errorf("interrupted and resumed run differs from the uninterrupted one:\n%s\nvs\n%s", trainingColumns(a), trainingColumns(b))
	}
	// A finished run is left alone: nothing in its directory changes.
	before := snapshot(t, sweep.RunDir(dir, m.Runs[0]))
	st, err = sweep.RunIndex(context.Background(), dir, 0, quiet())
	if err != nil || st.State != sweep.Finished {
		t.Errorf("finished run: %+v, %v", st, err)
	}
	if after := snapshot(t, sweep.RunDir(dir, m.Runs[0])); after != before {
		t.Error("running a finished run changed its directory")
	}
	groups, err := Report(dir, filepath.Join(dir, "report"))
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 2 || groups[0].Finished != 1 || groups[1].Finished != 0 {
		t.Errorf("groups: %+v", groups)
	}
	rep, err := os.ReadFile(filepath.Join(dir, "report", ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1 of 2 runs finished", "| Copy | 8 | sparse | 0.05 | 6 | 1/1 |", "run 1 Copy-A8-soft-a0.02-s1: missing: never started",
		"pcl sweep run --dir " + dir + " --index 1", "![Copy-A8](Copy-A8.png)", "![Copy-A8-greedy](Copy-A8-greedy.png)", "| greedy solved |"} {
		if !strings.Contains(string(rep), want) {
			t.Errorf("report lacks %q:\n%s", want, rep)
		}
	}
	for _, f := range []string{"Copy-A8.png", "Copy-A8-greedy.png"} {
		if _, err := os.Stat(filepath.Join(dir, "report", f)); err != nil {
			t.Error(err)
		}
	}
}

// snapshot is the names, sizes and modification times of the files in dir.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %v\n", p, fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestChangedConfigUnderRun changes a run's config.json (as if the manifest had been replanned
// under it) and checks that the run is refused, reported, and left untouched.
func TestChangedConfigUnderRun(t *testing.T) {
	dir := t.TempDir()
	m := planTiny(t, dir)
	if _, err := sweep.RunIndex(context.Background(), dir, 0, quiet()); err != nil {
		t.Fatal(err)
	}
	rd := sweep.RunDir(dir, m.Runs[0])
	c, err := config.ReadFile(filepath.Join(rd, runstore.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	c.Alpha = 0.5
	if err := c.WriteFile(filepath.Join(rd, runstore.ConfigFile)); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, rd)
	_, err = sweep.RunIndex(context.Background(), dir, 0, quiet())
	if err == nil || !strings.Contains(err.Error(), "another config than the manifest's (alpha: 0.5 -> 0.05)") {
		t.Errorf("changed config: %v", err)
	}
	if snapshot(t, rd) != before {
		t.Error("the refused run's directory changed")
	}
	if _, err := sweep.Pending(dir, m); err == nil {
		t.Error("Pending hides the conflicting run")
	}
	if _, err := Report(dir, filepath.Join(dir, "report")); err != nil {
		t.Fatal(err)
	}
	rep, _ := os.ReadFile(filepath.Join(dir, "report", ReportFile))
	if !strings.Contains(string(rep), "another config than the manifest's") {
		t.Errorf("report does not name the conflict:\n%s", rep)
	}
	// A larger budget in the run's config is not a conflict: the run counts as finished at the
	// manifest's budget once its checkpoint is there (TestRunBeyondTheBudget).
	c.Alpha, c.Iters = 0.05, 99
	if err := c.WriteFile(filepath.Join(rd, runstore.ConfigFile)); err != nil {
		t.Fatal(err)
	}
	if st, err := sweep.Inspect(dir, m.Runs[0]); err != nil || st.State != sweep.Finished || st.Iteration != m.Runs[0].Config.Iters {
		t.Errorf("a run with a larger budget: %+v, %v; want finished at the manifest's budget", st, err)
	}
}

func TestBestWeights(t *testing.T) {
	g := func(algo config.Algo, alpha, final float64, finished int) *Group {
		return &Group{Env: "Copy-v0", Base: 5, Algo: algo, Alpha: alpha, FinalMean: final, Finished: finished}
	}
	cases := []struct {
		name   string
		groups []*Group
		want   []bool
	}{
		{"one finished of two: no star", []*Group{g("sparse", 0.01, 1, 1), g("sparse", 0.05, math.NaN(), 0)}, []bool{false, false}},
		{"best of two finished", []*Group{g("sparse", 0.01, 1, 1), g("sparse", 0.05, 2, 1)}, []bool{false, true}},
		{"per algorithm", []*Group{g("sparse", 0.01, 3, 1), g("sparse", 0.05, 2, 1), g("soft", 0.01, 1, 1), g("soft", 0.1, 0, 1)}, []bool{true, false, true, false}},
		{"a lone weight", []*Group{g("soft", 0.01, 1, 1)}, []bool{false}},
	}
	for _, c := range cases {
		best := bestWeights(c.groups)
		for i, gr := range c.groups {
			if best[gr] != c.want[i] {
				t.Errorf("%s: group %d starred %v, want %v", c.name, i, best[gr], c.want[i])
			}
		}
	}
}

func TestChooseWeights(t *testing.T) {
	g := func(env string, algo config.Algo, base int, alpha, frac float64, finished int) *Group {
		return &Group{Env: env, Algo: algo, Base: base, Alpha: alpha, FracMean: frac, Finished: finished}
	}
	groups := []*Group{
		// Copy sparse: 0.01 wins on average over both sizes, though 0.05 wins the small one.
		g("Copy-v0", "sparse", 5, 0.01, 0.9, 1), g("Copy-v0", "sparse", 5, 0.05, 1.0, 1),
		g("Copy-v0", "sparse", 10, 0.01, 0.6, 1), g("Copy-v0", "sparse", 10, 0.05, 0.2, 1),
		// A size where 0.01 has not finished does not count: 0.05 would otherwise lose by -0.5.
		g("Copy-v0", "sparse", 20, 0.01, math.NaN(), 0), g("Copy-v0", "sparse", 20, 0.05, -0.5, 1),
		// Soft: a tie keeps the first weight given.
		g("Copy-v0", "soft", 5, 0.001, 0.5, 1), g("Copy-v0", "soft", 5, 0.025, 0.5, 1),
		// One weight only: no choice.
		g("Reverse-v0", "sparse", 4, 0.05, 0.9, 1),
	}
	got := ChooseWeights(groups)
	want := []Choice{{Env: "Copy-v0", Algo: "sparse", Alpha: 0.01, Score: 0.75, Sizes: 2}, {Env: "Copy-v0", Algo: "soft", Alpha: 0.001, Score: 0.5, Sizes: 1}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("choices %v, want %v", got, want)
	}
	if f, w := WeightFlags(got), "--sparse-alphas Copy-v0:0.01 --soft-alphas Copy-v0:0.001"; f != w {
		t.Fatalf("flags %q, want %q", f, w)
	}
	cells, err := sweep.Grid{Envs: "Copy-v0", Bases: "5", Algos: "sparse,soft", SparseAlphas: "Copy-v0:0.01", SoftAlphas: "Copy-v0:0.001"}.Cells()
	if err != nil || len(cells) != 2 {
		t.Fatalf("the flags do not plan back: %v %v", cells, err)
	}
}

// The steady rule picks the most passes, then the higher last-10% greedy mean (a NaN below every
// number), then the first weight given; a cell with an unfinished run, or one weight only, is not
// chosen.
func TestChooseSteady(t *testing.T) {
	g := func(env string, algo config.Algo, base int, alpha float64, passed int, greedy float64, finished, runs int) *Group {
		return &Group{Env: env, Algo: algo, Base: base, Alpha: alpha, Passed: passed, GreedyMean: greedy, Finished: finished, Runs: make([]RunResult, runs)}
	}
	nan := math.NaN()
	for _, tc := range []struct {
		name   string
		groups []*Group
		want   []SteadyChoice
	}{
		{"most passes, though a lower greedy mean",
			[]*Group{g("Copy-v0", "sparse", 40, 0.01, 2, 20, 3, 3), g("Copy-v0", "sparse", 40, 0.05, 3, 10, 3, 3)},
			[]SteadyChoice{{Env: "Copy-v0", Base: 40, Algo: "sparse", Alpha: 0.05, Passed: 3, Seeds: 3, Greedy: 10}}},
		{"a tie in passes: the greedy mean",
			[]*Group{g("Copy-v0", "soft", 40, 0.005, 0, 3, 3, 3), g("Copy-v0", "soft", 40, 0.025, 0, 8, 3, 3), g("Copy-v0", "soft", 40, 0.05, 0, nan, 3, 3)},
			[]SteadyChoice{{Env: "Copy-v0", Base: 40, Algo: "soft", Alpha: 0.025, Seeds: 3, Greedy: 8}}},
		{"a NaN greedy mean loses to any number",
			[]*Group{g("Reverse-v0", "sparse", 32, 0.01, 0, nan, 3, 3), g("Reverse-v0", "sparse", 32, 0.05, 0, -1, 3, 3)},
			[]SteadyChoice{{Env: "Reverse-v0", Base: 32, Algo: "sparse", Alpha: 0.05, Seeds: 3, Greedy: -1}}},
		{"a full tie keeps the first weight",
			[]*Group{g("Copy-v0", "sparse", 40, 0.1, 1, 5, 3, 3), g("Copy-v0", "sparse", 40, 0.01, 1, 5, 3, 3)},
			[]SteadyChoice{{Env: "Copy-v0", Base: 40, Algo: "sparse", Alpha: 0.1, Passed: 1, Seeds: 3, Greedy: 5}}},
		{"an unfinished run: no choice yet",
			[]*Group{g("Copy-v0", "sparse", 40, 0.01, 3, 30, 3, 3), g("Copy-v0", "sparse", 40, 0.05, 0, 1, 2, 3)}, nil},
		{"one weight: no choice", []*Group{g("Copy-v0", "sparse", 40, 0.01, 3, 30, 3, 3)}, nil},
	} {
		got := ChooseSteady(tc.groups)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	var b strings.Builder
	writeSteadyChoices(&b, []*Group{g("Copy-v0", "sparse", 40, 0.01, 3, 30.5, 3, 3), g("Copy-v0", "sparse", 40, 0.05, 0, 1, 3, 3)})
	if want := "| Copy | 160 | sparse | 0.01 | 3/3 | 30.50 |"; !strings.Contains(b.String(), want) {
		t.Errorf("the report's steady choices lack %q:\n%s", want, b.String())
	}
	both := ChooseSteady([]*Group{g("Copy-v0", "sparse", 40, 0.01, 3, 30, 3, 3), g("Copy-v0", "sparse", 40, 0.05, 0, 1, 3, 3),
		g("Copy-v0", "soft", 40, 0.005, 0, 2, 3, 3), g("Copy-v0", "soft", 40, 0.025, 1, 9, 3, 3)})
	if f, w := SteadyWeightFlags(both), "--sparse-alphas Copy-v0:0.01 --soft-alphas Copy-v0:0.025"; f != w {
		t.Errorf("flags %q, want %q", f, w)
	}
}

// The report's greedy column is the mean greedy reward of the evaluations in the last 10% of the
// budget with its sample standard deviation over the seeds, and its length column the curriculum length the runs ended at.
func TestReportGreedyAndLength(t *testing.T) {
	dir := t.TempDir()
	base := tiny()
	base.Iters, base.EvalEvery = 20, 1
	m, err := sweep.Plan(sweep.Spec{Base: base, Cells: []sweep.Cell{{Env: "Copy-v0", Base: 2, Algo: "sparse", Alpha: 0.05}}, Seeds: 2, FirstSeed: 1, TaskThresholds: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := sweep.Write(dir, m); err != nil {
		t.Fatal(err)
	}
	var greedy []float64
	lo, hi, rising := math.MaxInt, 0, 0
	for i := range m.Runs {
		if _, err := sweep.RunIndex(context.Background(), dir, i, quiet()); err != nil {
			t.Fatal(err)
		}
		rows, err := runstore.ReadMetrics(filepath.Join(sweep.RunDir(dir, m.Runs[i]), runstore.MetricsFile))
		if err != nil {
			t.Fatal(err)
		}
		s := 0.0
		for _, r := range rows[18:] { // the last 10% of 20 iterations
			s += r.GreedyReward
		}
		greedy = append(greedy, s/2)
		if StillRising(rows, m.Runs[i].Config.RewardThreshold) {
			rising++
		}
		lv := rows[len(rows)-1].Curriculum
		lo, hi = min(lo, lv), max(hi, lv)
	}
	groups, err := Report(dir, filepath.Join(dir, "report"))
	if err != nil {
		t.Fatal(err)
	}
	// Two seeds: the sample standard deviation (n − 1) is |a − b|/√2 (the population one |a − b|/2).
	wantMean, wantStd := (greedy[0]+greedy[1])/2, math.Abs(greedy[0]-greedy[1])/math.Sqrt2
	g := groups[0]
	if math.IsNaN(g.GreedyMean) || math.Abs(g.GreedyMean-wantMean) > 1e-12 || math.Abs(g.GreedyStd-wantStd) > 1e-12 || g.LevelMin != lo || g.LevelMax != hi {
		t.Errorf("greedy %v ± %v, length %d-%d; want %v ± %v, length %d-%d", g.GreedyMean, g.GreedyStd, g.LevelMin, g.LevelMax, wantMean, wantStd, lo, hi)
	}
	if g.Rising != rising {
		t.Errorf("%d runs rising, want %d (StillRising of their metrics)", g.Rising, rising)
	}
	rep, err := os.ReadFile(filepath.Join(dir, "report", ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	length := strconv.Itoa(hi)
	if lo != hi {
		length = fmt.Sprintf("%d-%d", lo, hi)
	}
	if row := fmt.Sprintf("| %s | %s | %s | %s |", pm(g.FinalMean, g.FinalStd), pm(wantMean, wantStd), num(g.FracMean, 2), length); !strings.Contains(string(rep), row) {
		t.Errorf("report lacks %q:\n%s", row, rep)
	}
}

// A run continued beyond its sweep's budget (here by a sweep of the same cell with twice the
// budget, whose run directory is then copied in) is finished at the shorter sweep's budget: the
// runner leaves it alone and the report reads its first budget iterations only.
func TestRunBeyondTheBudget(t *testing.T) {
	short, long := t.TempDir(), t.TempDir()
	cell := sweep.Cell{Env: "Copy-v0", Base: 2, Algo: config.AlgoSparse, Alpha: 0.05}
	plan := func(dir string, iters int) sweep.Manifest {
		c := tiny()
		c.Iters = iters
		m, err := sweep.Plan(sweep.Spec{Base: c, Cells: []sweep.Cell{cell}, Seeds: 1, FirstSeed: 1, TaskThresholds: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := sweep.Write(dir, m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := plan(short, 3)
	plan(long, 6)
	if _, err := sweep.RunIndex(context.Background(), long, 0, quiet()); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(sweep.RunDir(short, m.Runs[0]), os.DirFS(sweep.RunDir(long, m.Runs[0]))); err != nil {
		t.Fatal(err)
	}
	st, err := sweep.Inspect(short, m.Runs[0])
	if err != nil || st.State != sweep.Finished || st.Iteration != 3 {
		t.Fatalf("a run of 6 iterations in a sweep of 3: %+v, %v; want finished at 3", st, err)
	}
	before := snapshot(t, sweep.RunDir(short, m.Runs[0]))
	if st, err := sweep.RunIndex(context.Background(), short, 0, quiet()); err != nil || st.State != sweep.Finished {
		t.Errorf("running it: %+v, %v", st, err)
	}
	if snapshot(t, sweep.RunDir(short, m.Runs[0])) != before {
		t.Error("running a run beyond its budget changed its directory")
	}
	_, results, err := Gather(short)
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]
	if r.Err != nil || len(r.Rows) != 3 || r.Rows[2].Iteration != 2 || r.Final != r.Rows[2].MeanReward {
		t.Errorf("the report's view: %d rows, final %v, err %v; want rows 0-2 and the final of row 2", len(r.Rows), r.Final, r.Err)
	}
}

// A group counts its seeds solved by sampled reward and, apart, by greedy evaluation: an
// exploring run's policy can pass the threshold while its sampled reward (with the random
// actions) stays below. It counts the runs still rising too.
func TestGroupsCountGreedySolved(t *testing.T) {
	c := tiny()
	c.Env, c.Base, c.Algo, c.Alpha = "Copy-v0", 5, "sparse", 0.05
	row := &runstore.Row{Iteration: 7}
	var results []RunResult
	for i, reach := range [][2]*runstore.Row{{nil, row}, {row, row}, {nil, nil}} {
		c.Seed = int64(i + 1)
		results = append(results, RunResult{Run: sweep.Run{ID: sweep.ID(c), Config: c}, Status: sweep.Status{State: sweep.Finished},
			Reach: reach[0], GreedyReach: reach[1], Final: 1, FinalGreedy: 2, Fraction: math.NaN(), Rising: i > 0})
	}
	g := Groups(results)
	if len(g) != 1 || g[0].Finished != 3 || g[0].Solved != 1 || g[0].GreedySolved != 2 || g[0].Rising != 2 {
		t.Fatalf("groups %+v, want one of 3 finished seeds, 1 solved by sampled reward, 2 by greedy and 2 rising", g)
	}
}

// TestResultsCopyWithoutCheckpoint replans a sweep into a fresh directory and restores a finished
// run from its results copy (config.json, metrics.csv and run.json, as docs/results keeps them,
// without the checkpoint): the copy is finished, reported as the original run, and never trained
// again. A copy cut short of the budget is a run killed before its first checkpoint: it starts over.
func TestResultsCopyWithoutCheckpoint(t *testing.T) {
	orig, fresh := t.TempDir(), t.TempDir()
	m := planTiny(t, orig)
	planTiny(t, fresh)
	if _, err := sweep.RunIndex(context.Background(), orig, 0, quiet()); err != nil {
		t.Fatal(err)
	}
	from, to := sweep.RunDir(orig, m.Runs[0]), sweep.RunDir(fresh, m.Runs[0])
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{runstore.ConfigFile, runstore.MetricsFile, "run.json"} {
		b, err := os.ReadFile(filepath.Join(from, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st, err := sweep.Inspect(fresh, m.Runs[0])
	if err != nil || st.State != sweep.Finished || st.Iteration != m.Runs[0].Config.Iters {
		t.Fatalf("a results copy: %+v, %v; want finished at the budget", st, err)
	}
	before := snapshot(t, to)
	if st, err := sweep.RunIndex(context.Background(), fresh, 0, quiet()); err != nil || st.State != sweep.Finished {
		t.Errorf("running the copy: %+v, %v", st, err)
	}
	if snapshot(t, to) != before {
		t.Error("running a results copy changed its directory")
	}
	if pending, err := sweep.Pending(fresh, m); err != nil || len(pending) != 1 || pending[0] != 1 {
		t.Errorf("pending after the restore: %v, %v; want only run 1", pending, err)
	}
	_, a, err := Gather(orig)
	if err != nil {
		t.Fatal(err)
	}
	_, b, err := Gather(fresh)
	if err != nil {
		t.Fatal(err)
	}
	if b[0].Err != nil || len(b[0].Rows) != len(a[0].Rows) || b[0].Final != a[0].Final || b[0].Level != a[0].Level {
		t.Errorf("the copy's report: %d rows, final %v, level %d, err %v; the original's: %d rows, final %v, level %d",
			len(b[0].Rows), b[0].Final, b[0].Level, b[0].Err, len(a[0].Rows), a[0].Final, a[0].Level)
	}

	// Cut the copy's metrics short of the budget: a run killed before its first checkpoint.
	rows, err := os.ReadFile(filepath.Join(to, runstore.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(rows), "\n")
	if err := os.WriteFile(filepath.Join(to, runstore.MetricsFile), []byte(strings.Join(lines[:3], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err := sweep.Inspect(fresh, m.Runs[0]); err != nil || st.State != sweep.Started {
		t.Errorf("a copy cut at 2 of %d iterations: %+v, %v; want started", m.Runs[0].Config.Iters, st, err)
	}
}
