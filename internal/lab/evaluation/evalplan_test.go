package evaluation

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/internal/lab/sweep"
)

// credit is a group of a credit sweep with the counts the choice reads: steady passes, the mean
// last-10% greedy reward, the runs still rising, and finished of runs.
func credit(env string, base int, algo config.Algo, alpha float64, passed int, greedy float64, rising, finished, runs int) *Group {
	return &Group{Env: env, Base: base, Algo: algo, Alpha: alpha, Passed: passed, GreedyMean: greedy, Rising: rising,
		Finished: finished, Runs: make([]RunResult, runs)}
}

// arms are the four credit sweeps, each with its groups.
func arms(none, advantage, explore, both []*Group) []CreditArm {
	return []CreditArm{{LeversNone, none}, {LeversAdvantage, advantage}, {LeversExplore, explore}, {LeversBoth, both}}
}

// TestChooseConfigs: the most steady passes, then fewer levers, then the higher greedy mean (the
// greedy mean before the levers when no set passes: addendum 3), then the earlier lever set; the weight is the chosen set's; a size's budget is 4,000 when a chosen
// configuration there (and only a chosen one) rose on two of three seeds, for every algorithm at
// the size; a cell with a run unfinished, a lever set without it, or two groups of it in one
// sweep, is not chosen, and the other algorithm at its size waits with it.
func TestChooseConfigs(t *testing.T) {
	nan := math.NaN()
	c := func(passed int, greedy float64) *Group {
		return credit("Copy-v0", 40, "sparse", 0.01, passed, greedy, 0, 3, 3)
	}
	soft := func(set LeverSet) []*Group { // soft PCL at Copy 40, chosen in set
		if set == LeversNone {
			return []*Group{credit("Copy-v0", 40, "soft", 0.025, 1, 3, 0, 3, 3)}
		}
		return []*Group{credit("Copy-v0", 40, "soft", 0.025, 0, 9, 0, 3, 3)}
	}
	// four are the four lever sets with sparse PCL's groups at Copy 40 as given, and soft PCL's
	// chosen without levers.
	four := func(none, advantage, explore, both *Group) []CreditArm {
		return arms(append([]*Group{none}, soft(LeversNone)...), append([]*Group{advantage}, soft(LeversAdvantage)...),
			append([]*Group{explore}, soft(LeversExplore)...), append([]*Group{both}, soft(LeversBoth)...))
	}
	one := func(g *Group, set LeverSet) []*Group { return append([]*Group{g}, soft(set)...) }
	for _, tc := range []struct {
		name    string
		arms    []CreditArm
		want    []string // env base algo: set alpha iters
		why     []string // in the choices' Why, in order
		budget  []string // in the choices' Budget, in order
		waiting []string // env base algo: in Why
	}{
		{"the most passes, though more levers and a lower greedy mean",
			four(c(0, 20), c(1, 10), c(0, 5), credit("Copy-v0", 40, "sparse", 0.025, 3, 1, 0, 3, 3)),
			[]string{"Copy-v0 40 sparse: both 0.025 2000", "Copy-v0 40 soft: none 0.025 2000"},
			[]string{"most steady passes: 3/3 (advantage: 1/3)", "most steady passes: 1/3"},
			[]string{"no choice at the size rising on two thirds of its seeds (sparse 0/3, soft 0/3)", "(sparse 0/3, soft 0/3)"}, nil},
		{"a tie in passes: fewer levers, though a lower greedy mean",
			four(c(1, 30), c(2, 10), c(1, 30), c(2, 30)),
			[]string{"Copy-v0 40 sparse: advantage 0.01 2000", "Copy-v0 40 soft: none 0.025 2000"},
			[]string{"tied on steady passes (2/3) with both: fewer levers", ""}, nil, nil},
		{"a tie in passes and levers: the higher greedy mean",
			four(c(0, 30), c(1, 5), c(1, 8), c(0, 30)),
			[]string{"Copy-v0 40 sparse: explore 0.01 2000", "Copy-v0 40 soft: none 0.025 2000"},
			[]string{"tied on steady passes (1/3) and levers with advantage: the higher greedy mean (8.00 against 5.00)", ""}, nil, nil},
		{"no passes anywhere: the higher greedy mean, though more levers (addendum 3)",
			four(c(0, -1), c(0, 5), c(0, 8), c(0, 20)),
			[]string{"Copy-v0 40 sparse: both 0.01 2000", "Copy-v0 40 soft: none 0.025 2000"},
			[]string{"no steady pass (0/3), nor in explore: the higher greedy mean (20.00 against 8.00)", ""}, nil, nil},
		{"no passes and equal greedy means: fewer levers",
			four(c(0, 8), c(0, 8), c(0, 5), c(0, 8)),
			[]string{"Copy-v0 40 sparse: none 0.01 2000", "Copy-v0 40 soft: none 0.025 2000"},
			[]string{"tied on steady passes (0/3) with advantage: fewer levers", ""}, nil, nil},
		{"a NaN greedy mean (no evaluations) below any number",
			four(c(0, 1), c(2, nan), c(2, -1), c(0, 1)),
			[]string{"Copy-v0 40 sparse: explore 0.01 2000", "Copy-v0 40 soft: none 0.025 2000"},
			[]string{"the higher greedy mean (-1.00 against –)", ""}, nil, nil},
		{"a full tie: the earlier lever set",
			four(c(0, 1), c(2, 5), c(2, 5), c(0, 1)),
			[]string{"Copy-v0 40 sparse: advantage 0.01 2000", "Copy-v0 40 soft: none 0.025 2000"},
			[]string{"tied on steady passes (2/3), levers and greedy mean with explore: the earlier lever set", ""}, nil, nil},
		{"rising on two of three seeds: 4,000 iterations for both algorithms at the size",
			four(c(0, 1), c(0, 1), c(0, 1), credit("Copy-v0", 40, "sparse", 0.01, 3, 30, 2, 3, 3)),
			[]string{"Copy-v0 40 sparse: both 0.01 4000", "Copy-v0 40 soft: none 0.025 4000"},
			nil, []string{"a choice at the size rising on two thirds of its seeds (sparse 2/3, soft 0/3)", "(sparse 2/3, soft 0/3)"}, nil},
		{"rising on one of three: 2,000",
			four(c(0, 1), c(0, 1), c(0, 1), credit("Copy-v0", 40, "sparse", 0.01, 3, 30, 1, 3, 3)),
			[]string{"Copy-v0 40 sparse: both 0.01 2000", "Copy-v0 40 soft: none 0.025 2000"},
			nil, []string{"(sparse 1/3, soft 0/3)"}, nil},
		{"only the chosen configuration's rising counts",
			four(credit("Copy-v0", 40, "sparse", 0.01, 0, 1, 3, 3, 3), c(0, 1), c(0, 1), credit("Copy-v0", 40, "sparse", 0.01, 3, 30, 0, 3, 3)),
			[]string{"Copy-v0 40 sparse: both 0.01 2000", "Copy-v0 40 soft: none 0.025 2000"}, nil, nil, nil},
		{"a run unfinished: its cell and the other algorithm at its size wait; another size is chosen",
			[]CreditArm{
				{LeversNone, append(one(c(0, 1), LeversNone), credit("Reverse-v0", 32, "sparse", 0.05, 0, 1, 0, 3, 3), credit("Reverse-v0", 32, "soft", 0.01, 0, 1, 0, 3, 3))},
				{LeversAdvantage, append(one(c(1, 1), LeversAdvantage), credit("Reverse-v0", 32, "sparse", 0.05, 0, 1, 0, 2, 3), credit("Reverse-v0", 32, "soft", 0.01, 0, 1, 0, 3, 3))},
			},
			[]string{"Copy-v0 40 sparse: advantage 0.01 2000", "Copy-v0 40 soft: none 0.025 2000"}, nil, nil,
			[]string{"Reverse-v0 32 sparse: 2 of 3 runs of the advantage sweep finished", "Reverse-v0 32 soft: the size's budget waits for sparse: 2 of 3 runs"}},
		{"a run never started",
			four(c(0, 1), c(0, 1), credit("Copy-v0", 40, "sparse", 0.01, 0, nan, 0, 0, 3), c(0, 1)),
			nil, nil, nil,
			[]string{"Copy-v0 40 sparse: 0 of 3 runs of the explore sweep finished", "Copy-v0 40 soft: the size's budget waits for sparse"}},
		{"a lever set without the cell",
			arms(one(c(0, 1), LeversNone), one(c(0, 1), LeversAdvantage), one(c(0, 1), LeversExplore), soft(LeversBoth)),
			nil, nil, nil,
			[]string{"Copy-v0 40 sparse: no runs in the both sweep", "Copy-v0 40 soft: the size's budget waits for sparse"}},
		{"a lever set with two weights of the cell",
			arms(one(c(0, 1), LeversNone), one(c(0, 1), LeversAdvantage), one(c(0, 1), LeversExplore),
				append(one(c(0, 1), LeversBoth), credit("Copy-v0", 40, "sparse", 0.05, 3, 30, 0, 3, 3))),
			nil, nil, nil,
			[]string{"Copy-v0 40 sparse: the both sweep has 2 weights or budgets of it", "Copy-v0 40 soft: the size's budget waits"}},
		{"a set that is not a lever set",
			[]CreditArm{{"all", one(c(0, 1), LeversNone)}}, nil, nil, nil,
			[]string{`Copy-v0 40 sparse: "all" is not a lever set`, `Copy-v0 40 soft: "all" is not a lever set`}},
		{"a moving weight is left out",
			[]CreditArm{{LeversNone, append(one(c(0, 1), LeversNone), &Group{Env: "Copy-v0", Base: 40, Algo: "sparse", Alpha: 0.01, Control: "auto", Passed: 3, Finished: 3, Runs: make([]RunResult, 3)})}},
			[]string{"Copy-v0 40 sparse: none 0.01 2000", "Copy-v0 40 soft: none 0.025 2000"}, []string{"the only lever set"}, nil, nil},
		{"no sweeps", nil, nil, nil, nil, nil},
	} {
		chosen, waiting := ChooseConfigs(tc.arms)
		var got, gotWaiting []string
		for _, ch := range chosen {
			got = append(got, fmt.Sprintf("%s %d %s: %s %g %d", ch.Env, ch.Base, ch.Algo, ch.Set, ch.Alpha, ch.Iters))
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: chosen %q, want %q", tc.name, got, tc.want)
			continue
		}
		for i, w := range tc.why {
			if !strings.Contains(chosen[i].Why, w) {
				t.Errorf("%s: choice %d says %q, want %q in it", tc.name, i, chosen[i].Why, w)
			}
		}
		for i, w := range tc.budget {
			if !strings.Contains(chosen[i].Budget, w) {
				t.Errorf("%s: choice %d's budget says %q, want %q in it", tc.name, i, chosen[i].Budget, w)
			}
		}
		for _, w := range waiting {
			gotWaiting = append(gotWaiting, fmt.Sprintf("%s %d %s: %s", w.Env, w.Base, w.Algo, w.Why))
		}
		if len(gotWaiting) != len(tc.waiting) {
			t.Errorf("%s: waiting %q, want %q", tc.name, gotWaiting, tc.waiting)
			continue
		}
		for i, w := range tc.waiting {
			if !strings.HasPrefix(gotWaiting[i], w) {
				t.Errorf("%s: waiting %q, want it to start %q", tc.name, gotWaiting[i], w)
			}
		}
	}
}

// evalChoices are choices at the five largest sizes but ReversedAddition's: Reverse at 4,000
// iterations, the others at 2,000, in three lever sets.
func evalChoices() []ConfigChoice {
	ch := func(env string, base int, algo config.Algo, set LeverSet, alpha float64, iters int) ConfigChoice {
		return ConfigChoice{Env: env, Base: base, Algo: algo, Set: set, Alpha: alpha, Iters: iters}
	}
	return []ConfigChoice{
		ch("Copy-v0", 40, "sparse", LeversBoth, 0.01, 2000), ch("Copy-v0", 40, "soft", LeversBoth, 0.025, 2000),
		ch("DuplicatedInput-v0", 80, "sparse", LeversBoth, 0.05, 2000), ch("DuplicatedInput-v0", 80, "soft", LeversNone, 0.01, 2000),
		ch("Reverse-v0", 32, "sparse", LeversBoth, 0.05, 4000), ch("Reverse-v0", 32, "soft", LeversAdvantage, 0.005, 4000),
	}
}

// planFlags plans flags as pcl sweep plan does (the grid's flags and the config's), with seeds.
func planFlags(t *testing.T, flags string, seed int64, seeds int) sweep.Manifest {
	t.Helper()
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var g sweep.Grid
	g.RegisterFlags(fs)
	cfg := config.Default()
	cfg.RegisterFlags(fs)
	if err := fs.Parse(strings.Fields(flags)); err != nil {
		t.Fatalf("%s: %v", flags, err)
	}
	cells, err := g.Cells()
	if err != nil {
		t.Fatalf("%s: %v", flags, err)
	}
	cfg.Seed = seed
	m, err := sweep.Plan(sweep.Spec{Base: cfg, Cells: cells, Seeds: seeds, FirstSeed: seed, TaskThresholds: true})
	if err != nil {
		t.Fatalf("%s: %v", flags, err)
	}
	return m
}

// Each (lever set, budget) of the choices is one sweep whose flags plan exactly its cells at its
// budget: tasks with different algorithms name theirs; each task's smaller Figure-1 sizes take
// the lever set and weight chosen at its largest. Cells that no one grid holds are refused.
func TestEvalSweeps(t *testing.T) {
	eval, err := EvalSweeps(evalChoices())
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ name, flags string }{
		{"eval-none-2000", "--envs DuplicatedInput-v0 --actions DuplicatedInput-v0:320 --algos soft --soft-alphas DuplicatedInput-v0:0.01 --iters 2000"},
		{"eval-advantage-4000", "--envs Reverse-v0 --actions Reverse-v0:128 --algos soft --soft-alphas Reverse-v0:0.005 --iters 4000"},
		{"eval-both-2000", "--envs Copy-v0,DuplicatedInput-v0 --actions Copy-v0:160,DuplicatedInput-v0:320 --algos Copy-v0:sparse,Copy-v0:soft,DuplicatedInput-v0:sparse " +
			"--sparse-alphas Copy-v0:0.01,DuplicatedInput-v0:0.05 --soft-alphas Copy-v0:0.025 --iters 2000"},
		{"eval-both-4000", "--envs Reverse-v0 --actions Reverse-v0:128 --algos sparse --sparse-alphas Reverse-v0:0.05 --iters 4000"},
	}
	if len(eval) != len(want) {
		t.Fatalf("%d sweeps %+v, want %d", len(eval), eval, len(want))
	}
	planned := map[string]string{} // run id -> sweep
	for i, w := range want {
		s := eval[i]
		if s.Name != w.name || s.Flags != w.flags {
			t.Errorf("sweep %d: %s `%s`, want %s `%s`", i, s.Name, s.Flags, w.name, w.flags)
		}
		m := planFlags(t, s.Flags, 1, 5)
		if len(m.Runs) != 5*len(s.Cells) {
			t.Errorf("%s: %d runs, want 5 seeds of %d cells", s.Name, len(m.Runs), len(s.Cells))
		}
		for _, r := range m.Runs {
			planned[r.ID] = s.Name
			if r.Config.Iters != s.Iters {
				t.Errorf("%s: run %s of %d iterations, want %d", s.Name, r.ID, r.Config.Iters, s.Iters)
			}
		}
	}
	for _, c := range evalChoices() { // every choice at its sweep, five seeds
		cfg := config.Default()
		cfg.Env, cfg.Base, cfg.Algo, cfg.Alpha = c.Env, c.Base, c.Algo, c.Alpha
		for seed := int64(1); seed <= 5; seed++ {
			cfg.Seed = seed
			if s := planned[sweep.ID(cfg)]; s != fmt.Sprintf("eval-%s-%d", c.Set, c.Iters) {
				t.Errorf("choice %+v seed %d planned in %q", c, seed, s)
			}
		}
	}
	if len(planned) != 5*len(evalChoices()) {
		t.Errorf("%d runs planned, want %d", len(planned), 5*len(evalChoices()))
	}

	small, err := SmallSweeps(evalChoices())
	if err != nil {
		t.Fatal(err)
	}
	wantSmall := []struct{ name, flags string }{
		{"small-none", "--envs DuplicatedInput-v0 --actions DuplicatedInput-v0:20,DuplicatedInput-v0:80,DuplicatedInput-v0:160 --algos soft --soft-alphas DuplicatedInput-v0:0.01 --iters 1000"},
		{"small-advantage", "--envs Reverse-v0 --actions Reverse-v0:16,Reverse-v0:32,Reverse-v0:64 --algos soft --soft-alphas Reverse-v0:0.005 --iters 1000"},
		{"small-both", "--envs Copy-v0,DuplicatedInput-v0,Reverse-v0 --actions Copy-v0:20,Copy-v0:40,Copy-v0:80,DuplicatedInput-v0:20,DuplicatedInput-v0:80,DuplicatedInput-v0:160,Reverse-v0:16,Reverse-v0:32,Reverse-v0:64 " +
			"--algos Copy-v0:sparse,Copy-v0:soft,DuplicatedInput-v0:sparse,Reverse-v0:sparse --sparse-alphas Copy-v0:0.01,DuplicatedInput-v0:0.05,Reverse-v0:0.05 --soft-alphas Copy-v0:0.025 --iters 1000"},
	}
	if len(small) != len(wantSmall) {
		t.Fatalf("%d small sweeps %+v, want %d", len(small), small, len(wantSmall))
	}
	for i, w := range wantSmall {
		if small[i].Name != w.name || small[i].Flags != w.flags {
			t.Errorf("small sweep %d: %s `%s`, want %s `%s`", i, small[i].Name, small[i].Flags, w.name, w.flags)
		}
		if m := planFlags(t, small[i].Flags, 1, 3); len(m.Runs) != 3*len(small[i].Cells) || m.Runs[0].Config.Iters != SmallIters {
			t.Errorf("%s: %d runs of %d iterations, want 3 seeds of %d cells, %d iterations", w.name, len(m.Runs), m.Runs[0].Config.Iters, len(small[i].Cells), SmallIters)
		}
	}

	// Two weights of one task and algorithm at two sizes are no grid (the flags would cross them).
	two := []ConfigChoice{
		{Env: "Copy-v0", Base: 40, Algo: "sparse", Set: LeversBoth, Alpha: 0.01, Iters: 2000},
		{Env: "Copy-v0", Base: 20, Algo: "sparse", Set: LeversBoth, Alpha: 0.05, Iters: 2000},
	}
	if _, err := EvalSweeps(two); err == nil || !strings.Contains(err.Error(), "not one grid") {
		t.Errorf("two weights at two sizes: %v, want a refusal", err)
	}
	if _, err := EvalSweeps([]ConfigChoice{{Env: "Copy-v0", Base: 40, Algo: "sparse", Set: LeversBoth, Alpha: 0.01, Iters: 3000}}); err == nil {
		t.Error("a budget outside the protocol's: no error")
	}
	if _, err := EvalSweeps([]ConfigChoice{{Env: "CartPole-v1", Base: 2, Algo: "sparse", Set: LeversBoth, Alpha: 0.01, Iters: 2000}}); err == nil {
		t.Error("a task without |A|: no error")
	}
}

// The report gives the choices and, only once none waits, one table row per evaluation sweep
// with its flags, in the form scripts/figure1-levers reads.
func TestWriteChoices(t *testing.T) {
	out := t.TempDir()
	done := arms(
		[]*Group{credit("Copy-v0", 40, "sparse", 0.01, 0, 1, 0, 3, 3), credit("Copy-v0", 40, "soft", 0.025, 0, 2, 0, 3, 3)},
		[]*Group{credit("Copy-v0", 40, "sparse", 0.01, 1, 5, 0, 3, 3), credit("Copy-v0", 40, "soft", 0.025, 0, 2, 0, 3, 3)},
		[]*Group{credit("Copy-v0", 40, "sparse", 0.01, 0, 1, 0, 3, 3), credit("Copy-v0", 40, "soft", 0.025, 0, 2, 0, 3, 3)},
		[]*Group{credit("Copy-v0", 40, "sparse", 0.01, 3, 30.5, 2, 3, 3), credit("Copy-v0", 40, "soft", 0.025, 0, 2, 0, 3, 3)},
	)
	ch, err := WriteChoices(out, done)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	rep := string(b)
	for _, want := range []string{
		"| Copy | 160 | sparse | 0/3, 1.00, rising 0 (w 0.01) | 1/3, 5.00, rising 0 (w 0.01) | 0/3, 1.00, rising 0 (w 0.01) | 3/3, 30.50, rising 2 (w 0.01) |",
		"| Copy | 160 | sparse | both | 0.01 | 3/3 | 30.50 | 2/3 | 4000 | most steady passes: 3/3 (advantage: 1/3) |",
		"| Copy | 160 | soft | none | 0.025 | 0/3 | 2.00 | 0/3 | 4000 |",
		"| eval-none-4000 | none | 4000 | `--envs Copy-v0 --actions Copy-v0:160 --algos soft --soft-alphas Copy-v0:0.025 --iters 4000` |",
		"| eval-both-4000 | both | 4000 | `--envs Copy-v0 --actions Copy-v0:160 --algos sparse --sparse-alphas Copy-v0:0.01 --iters 4000` |",
		"| small-none | none | 1000 | `--envs Copy-v0 --actions Copy-v0:20,Copy-v0:40,Copy-v0:80 --algos soft --soft-alphas Copy-v0:0.025 --iters 1000` |",
		"| small-both | both | 1000 | `--envs Copy-v0 --actions Copy-v0:20,Copy-v0:40,Copy-v0:80 --algos sparse --sparse-alphas Copy-v0:0.01 --iters 1000` |",
	} {
		if !strings.Contains(rep, want) {
			t.Errorf("the report lacks %q:\n%s", want, rep)
		}
	}
	if strings.Contains(rep, "## Not chosen yet") || len(ch.Eval) != 2 || len(ch.Small) != 2 {
		t.Errorf("all chosen: %d eval and %d small sweeps, want 2 and 2:\n%s", len(ch.Eval), len(ch.Small), rep)
	}

	done[2].Groups[1] = credit("Copy-v0", 40, "soft", 0.025, 0, 2, 0, 2, 3) // a soft run of explore unfinished
	ch, err = WriteChoices(out, done)
	if err != nil {
		t.Fatal(err)
	}
	if b, err = os.ReadFile(filepath.Join(out, ReportFile)); err != nil {
		t.Fatal(err)
	}
	rep = string(b)
	if !strings.Contains(rep, "## Not chosen yet (2)") || !strings.Contains(rep, "- Copy 160 soft: 2 of 3 runs of the explore sweep finished") ||
		strings.Contains(rep, "## The evaluation sweeps") || len(ch.Eval)+len(ch.Small) != 0 {
		t.Errorf("with a run unfinished: %d sweeps, want none listed:\n%s", len(ch.Eval)+len(ch.Small), rep)
	}
}

func TestParseCreditDirs(t *testing.T) {
	got, err := ParseCreditDirs([]string{"none=runs/credit-none", "both=runs/credit-both"})
	if err != nil || fmt.Sprint(got) != "[{none runs/credit-none} {both runs/credit-both}]" {
		t.Errorf("%v, %v", got, err)
	}
	for _, bad := range [][]string{nil, {"all=runs/x"}, {"none"}, {"none="}, {"none=a", "none=b"}} {
		if _, err := ParseCreditDirs(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
