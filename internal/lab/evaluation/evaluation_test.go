package evaluation

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/internal/lab/sweep"
)

// evalRun is a finished run of seed with the last-10% greedy mean greedy, ending at level, and
// passing by the steady rule when pass.
func evalRun(c config.Config, seed int64, greedy float64, level int, pass bool) RunResult {
	c.Seed = seed
	return RunResult{Run: sweep.Run{Config: c}, Status: sweep.Status{State: sweep.Finished}, FinalGreedy: greedy, Level: level, Passed: pass}
}

// evalGroup is a group of runs with the counts Groups would give them.
func evalGroup(algo config.Algo, alpha float64, levers LeverSet, runs ...RunResult) *Group {
	c := config.Default()
	c.Env, c.Base, c.Algo, c.Alpha = "Copy-v0", 40, algo, alpha
	if levers == LeversAdvantage || levers == LeversBoth {
		c.ReplayPriority = config.PriorityAdvantage
	}
	if levers == LeversExplore || levers == LeversBoth {
		c.Explore = 0.3
	}
	g := &Group{Env: c.Env, Base: c.Base, Actions: 160, Algo: algo, Alpha: alpha, Iters: 2000}
	for _, r := range runs {
		seed := r.Run.Config.Seed
		r.Run.Config = c
		r.Run.Config.Seed = seed
		g.Runs = append(g.Runs, r)
		if finished(r) {
			g.Finished++
			if r.Passed {
				g.Passed++
			}
		}
	}
	return g
}

// CompareSizes pairs the two algorithms seed by seed over the seeds both finished: the paired
// differences' mean, sample standard deviation (n − 1) and Student-t interval; the comparison is
// by steady passes, the goal needs 4 of 5; a second configuration of one algorithm at a size is
// an error that names both.
func TestCompareSizes(t *testing.T) {
	c := config.Default()
	unfinished := evalRun(c, 6, 31, 30, true)
	unfinished.Status.State = sweep.Partial
	sparse := evalGroup(config.AlgoSparse, 0.025, LeversBoth,
		evalRun(c, 1, 31, 30, true), evalRun(c, 2, 30, 30, true), evalRun(c, 3, 29, 30, true), evalRun(c, 4, 26, 30, true),
		evalRun(c, 5, 2, 2, false), unfinished)
	soft := evalGroup(config.AlgoSoft, 0.01, LeversExplore,
		evalRun(c, 1, 30, 30, true), evalRun(c, 2, 28, 30, false), evalRun(c, 3, 26, 30, false), evalRun(c, 4, 26, 30, false))
	cs, err := CompareSizes([]*Group{soft, sparse})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].Sparse != sparse || cs[0].Soft != soft {
		t.Fatalf("comparisons %+v, want one at Copy 160 with both groups", cs)
	}
	got := cs[0]
	// Seeds 1-4 are finished by both: differences 1, 2, 3, 0.
	if want := []int64{1, 2, 3, 4}; len(got.Seeds) != len(want) || got.Seeds[3] != 4 {
		t.Errorf("paired seeds %v, want %v", got.Seeds, want)
	}
	mean, std := 1.5, math.Sqrt(5.0/3)  // sum of squares 1.25+0.25+2.25+2.25 = 5, over n − 1 = 3
	half := 3.182446305284263 * std / 2 // t(0.975, 3) · std/√4
	iv := got.Paired
	if math.Abs(iv.Mean-mean) > 1e-12 || math.Abs(iv.Std-std) > 1e-12 || math.Abs(iv.Lower-(mean-half)) > 1e-9 || math.Abs(iv.Upper-(mean+half)) > 1e-9 {
		t.Errorf("paired %+v, want %v ± %v, interval %v to %v", iv, mean, std, mean-half, mean+half)
	}
	if ahead, decided := got.SparseAhead(); !ahead || !decided {
		t.Errorf("sparse passes 4/5 and soft 1/4: ahead %v, decided %v; want sparse ahead whatever soft's fifth seed does", ahead, decided)
	}
	if met, ok := got.Goal(); !ok || !met {
		t.Errorf("4 of 5 passes: goal met %v (defined %v), want met", met, ok)
	}
	five := got
	five.Sparse = evalGroup(config.AlgoSparse, 0.025, LeversBoth, sparse.Runs[:4]...)
	if _, ok := five.Goal(); ok {
		t.Error("4 finished seeds: the goal is defined at 5 only")
	}
	five.Sparse = evalGroup(config.AlgoSparse, 0.025, LeversBoth, evalRun(c, 1, 31, 30, true), evalRun(c, 2, 30, 30, true),
		evalRun(c, 3, 29, 30, true), evalRun(c, 4, 2, 2, false), evalRun(c, 5, 2, 2, false))
	if met, ok := five.Goal(); !ok || met {
		t.Errorf("3 of 5 passes: goal met %v (defined %v), want not met", met, ok)
	}

	other := evalGroup(config.AlgoSparse, 0.05, LeversNone, evalRun(c, 1, 31, 30, true))
	if _, err := CompareSizes([]*Group{sparse, soft, other}); err == nil ||
		!strings.Contains(err.Error(), "levers both, weight 0.025") || !strings.Contains(err.Error(), "levers none, weight 0.05") {
		t.Errorf("two sparse configurations at one size: %v, want an error naming both", err)
	}
}

// The evaluation report states the pass rule by name and shows, per size, the steady passes, the
// sample std and interval, sparse against soft with the paired difference, and every seed.
func TestWriteEvaluation(t *testing.T) {
	c := config.Default()
	sparse := evalGroup(config.AlgoSparse, 0.025, LeversBoth, evalRun(c, 1, 31, 30, true), evalRun(c, 2, 29, 30, true))
	soft := evalGroup(config.AlgoSoft, 0.01, LeversExplore, evalRun(c, 1, 5, 8, false), evalRun(c, 2, 3, 6, false))
	sparse.GreedySolved, sparse.LevelMin, sparse.LevelMax = 2, 30, 30
	soft.LevelMin, soft.LevelMax = 6, 8
	cs, err := CompareSizes([]*Group{sparse, soft})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := WriteEvaluation(out, "Evaluation", cs); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, EvaluationFile))
	if err != nil {
		t.Fatal(err)
	}
	rep := string(b)
	for _, want := range []string{
		"**Steady pass**",
		"sample standard deviation (n − 1)",
		// 31 and 29: mean 30, sample std √2; t(0.975, 1) = 12.706, half width 12.706.
		"| Copy | 160 | sparse | both | 0.025 | 2000 | 2 | **2/2** | 2/2 | 0/2 | 30.00 ± 1.41 | 17.29 to 42.71 | 30 |",
		"| Copy | 160 | soft | explore | 0.01 | 2000 | 2 | 0/2 | 0/2 | 0/2 | 4.00 ± 1.41 | -8.71 to 16.71 | 6-8 |",
		// Differences 26 and 26.
		"| Copy | 160 | 2/2 | 0/2 | **yes** | +26.00 ± 0.00 | 26.00 to 26.00 | 2/2 | – |",
		"| Copy | 160 | 1 | 31.00 ✓ | 30 | 5.00 | 8 | +26.00 |",
		"| Copy | 160 | 2 | 29.00 ✓ | 30 | 3.00 | 6 | +26.00 |",
	} {
		if !strings.Contains(rep, want) {
			t.Errorf("report lacks %q:\n%s", want, rep)
		}
	}
}

// From sweeps on disk: sparse PCL in one sweep and soft in another (as the evaluation runs each
// lever set as its own sweep), at two sizes, gathered, paired by seed and reported with the grids.
func TestEvaluationFromSweeps(t *testing.T) {
	base := tiny()
	base.Iters, base.EvalEvery = 10, 1
	var dirs []string
	for _, algo := range []config.Algo{config.AlgoSparse, config.AlgoSoft} {
		dir := t.TempDir()
		cells := []sweep.Cell{{Env: "Copy-v0", Base: 2, Algo: algo, Alpha: 0.05}, {Env: "Copy-v0", Base: 3, Algo: algo, Alpha: 0.05}}
		m, err := sweep.Plan(sweep.Spec{Base: base, Cells: cells, Seeds: 2, FirstSeed: 1, TaskThresholds: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := sweep.Write(dir, m); err != nil {
			t.Fatal(err)
		}
		for i := range m.Runs {
			if _, err := sweep.RunIndex(context.Background(), dir, i, quiet()); err != nil {
				t.Fatal(err)
			}
		}
		dirs = append(dirs, dir)
	}
	groups, err := GatherGroups(dirs)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := CompareSizes(groups)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].Actions != 8 || cs[1].Actions != 12 {
		t.Fatalf("comparisons %+v, want Copy at 8 and 12 actions (bases 2 and 3)", cs)
	}
	if cs[0].Sparse == nil || cs[0].Soft == nil || len(cs[0].Seeds) != 2 {
		t.Fatalf("comparison %+v, want both algorithms paired on seeds 1 and 2", cs[0])
	}
	for i, seed := range cs[0].Seeds {
		var s, f float64
		for _, r := range cs[0].Sparse.Runs {
			if r.Run.Config.Seed == seed {
				s = r.FinalGreedy
			}
		}
		for _, r := range cs[0].Soft.Runs {
			if r.Run.Config.Seed == seed {
				f = r.FinalGreedy
			}
		}
		if cs[0].Diffs[i] != s-f {
			t.Errorf("seed %d: difference %v, want %v - %v", seed, cs[0].Diffs[i], s, f)
		}
	}
	out := t.TempDir()
	if err := WriteEvaluation(out, "tiny", cs); err != nil {
		t.Fatal(err)
	}
	// The report, and Figure 1's grids of both sizes, sampled and greedy.
	for _, f := range []string{EvaluationFile, GridFile, GreedyGridFile, "Copy-A8.png", "Copy-A12-greedy.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := GatherGroups([]string{filepath.Join(out, "no-such-sweep")}); err == nil {
		t.Error("a directory without a manifest: no error")
	}
}

// The protocol's comparison is decided only where the seeds one algorithm has still to finish
// cannot change it, however they end.
func TestSparseAheadWithSeedsToFinish(t *testing.T) {
	group := func(algo config.Algo, passed, finished int) *Group {
		return &Group{Algo: algo, Passed: passed, Finished: finished}
	}
	for _, tc := range []struct {
		name                    string
		sparsePassed, sparseFin int
		softPassed, softFin     int
		wantAhead, wantDecided  bool
	}{
		{"equal seeds, sparse more", 3, 3, 2, 3, true, true},
		{"equal seeds, a tie", 2, 3, 2, 3, false, true},
		{"equal seeds, soft more", 1, 3, 2, 3, false, true},
		{"soft 1/1 against 2/3: soft's two seeds could pass", 2, 3, 1, 1, false, false},
		{"soft 0/1 against 3/3: soft's two seeds cannot catch up", 3, 3, 0, 1, true, true},
		{"sparse 0/1 against 3/3: sparse cannot get ahead", 0, 1, 3, 3, false, true},
		{"sparse 1/1 against 1/3: sparse's two seeds could pass", 1, 1, 1, 3, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Comparison{Sparse: group(config.AlgoSparse, tc.sparsePassed, tc.sparseFin), Soft: group(config.AlgoSoft, tc.softPassed, tc.softFin)}
			if ahead, decided := c.SparseAhead(); ahead != tc.wantAhead || decided != tc.wantDecided {
				t.Errorf("ahead %v, decided %v; want %v, %v", ahead, decided, tc.wantAhead, tc.wantDecided)
			}
		})
	}
	if _, decided := (Comparison{Sparse: group(config.AlgoSparse, 3, 3)}).SparseAhead(); decided {
		t.Error("without soft PCL's runs the comparison is decided")
	}
}
