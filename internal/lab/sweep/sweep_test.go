package sweep

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// tiny is a config that trains in a fraction of a second.
func tiny() config.Config {
	c := config.Default()
	c.BatchSize, c.Hidden, c.Iters, c.EvalEvery, c.EvalEpisodes, c.CheckpointEvery, c.ReplayCapacity = 8, 8, 6, 2, 4, 2, 50
	return c
}

func TestGridCells(t *testing.T) {
	ok := []struct {
		name string
		g    Grid
		want []Cell
	}{
		{"actions derive bases per task", Grid{Envs: "Copy-v0,ReversedAddition-v0", Actions: "40", Algos: "sparse", SparseAlphas: "0.05"},
			[]Cell{{Env: "Copy-v0", Base: 10, Algo: "sparse", Alpha: 0.05}, {Env: "ReversedAddition-v0", Base: 5, Algo: "sparse", Alpha: 0.05}}},
		{"bases, two algorithms, weights, budgets", Grid{Envs: "Reverse-v0", Bases: "4", Algos: "sparse,soft", SparseAlphas: "0.01,0.1", SoftAlphas: "0.001", ItersPerEnv: "Reverse-v0:7"},
			[]Cell{{Env: "Reverse-v0", Base: 4, Algo: "sparse", Alpha: 0.01, Iters: 7}, {Env: "Reverse-v0", Base: 4, Algo: "sparse", Alpha: 0.1, Iters: 7}, {Env: "Reverse-v0", Base: 4, Algo: "soft", Alpha: 0.001, Iters: 7}}},
		{"tsallis q", Grid{Envs: "Copy-v0", Bases: "5", Algos: "tsallis", TsallisAlphas: "0.05", TsallisQs: "1.5,2"},
			[]Cell{{Env: "Copy-v0", Base: 5, Algo: "tsallis", Alpha: 0.05, Q: 1.5}, {Env: "Copy-v0", Base: 5, Algo: "tsallis", Alpha: 0.05, Q: 2}}},
		{"weight controls, the schedule from 10w", Grid{Envs: "Copy-v0", Bases: "5", Algos: "sparse", SparseAlphas: "0.01,0.05", Controls: "fixed,decay,auto", StartFactor: 10},
			[]Cell{{Env: "Copy-v0", Base: 5, Algo: "sparse", Alpha: 0.01, Control: "fixed"}, {Env: "Copy-v0", Base: 5, Algo: "sparse", Alpha: 0.01, Control: "decay", AlphaStart: 0.1},
				{Env: "Copy-v0", Base: 5, Algo: "sparse", Alpha: 0.01, Control: "auto"}, {Env: "Copy-v0", Base: 5, Algo: "sparse", Alpha: 0.05, Control: "fixed"},
				{Env: "Copy-v0", Base: 5, Algo: "sparse", Alpha: 0.05, Control: "decay", AlphaStart: 0.5}, {Env: "Copy-v0", Base: 5, Algo: "sparse", Alpha: 0.05, Control: "auto"}}},
		{"weights per task", Grid{Envs: "Copy-v0,Reverse-v0,RepeatCopy-v0", Bases: "4", Algos: "sparse", SparseAlphas: "Copy-v0:0.01,Reverse-v0:0.05,Reverse-v0:0.2,0.1"},
			[]Cell{{Env: "Copy-v0", Base: 4, Algo: "sparse", Alpha: 0.01}, {Env: "Reverse-v0", Base: 4, Algo: "sparse", Alpha: 0.05}, {Env: "Reverse-v0", Base: 4, Algo: "sparse", Alpha: 0.2}, {Env: "RepeatCopy-v0", Base: 4, Algo: "sparse", Alpha: 0.1}}},
		{"sizes per task", Grid{Envs: "Copy-v0,Reverse-v0", Actions: "Copy-v0:160,Copy-v0:20,Reverse-v0:128", Algos: "sparse", SparseAlphas: "0.01"},
			[]Cell{{Env: "Copy-v0", Base: 40, Algo: "sparse", Alpha: 0.01}, {Env: "Copy-v0", Base: 5, Algo: "sparse", Alpha: 0.01}, {Env: "Reverse-v0", Base: 32, Algo: "sparse", Alpha: 0.01}}},
		{"a size for every task but one", Grid{Envs: "Copy-v0,ReversedAddition-v0", Actions: "40,Copy-v0:160", Algos: "sparse", SparseAlphas: "0.05"},
			[]Cell{{Env: "Copy-v0", Base: 40, Algo: "sparse", Alpha: 0.05}, {Env: "ReversedAddition-v0", Base: 5, Algo: "sparse", Alpha: 0.05}}},
		{"bases per task", Grid{Envs: "Copy-v0,Reverse-v0", Bases: "Copy-v0:5,4", Algos: "sparse", SparseAlphas: "0.05"},
			[]Cell{{Env: "Copy-v0", Base: 5, Algo: "sparse", Alpha: 0.05}, {Env: "Reverse-v0", Base: 4, Algo: "sparse", Alpha: 0.05}}},
		{"algorithms per task", Grid{Envs: "Copy-v0,Reverse-v0", Bases: "4", Algos: "Copy-v0:sparse,Copy-v0:soft,Reverse-v0:soft", SparseAlphas: "Copy-v0:0.01", SoftAlphas: "Copy-v0:0.025,Reverse-v0:0.005"},
			[]Cell{{Env: "Copy-v0", Base: 4, Algo: "sparse", Alpha: 0.01}, {Env: "Copy-v0", Base: 4, Algo: "soft", Alpha: 0.025}, {Env: "Reverse-v0", Base: 4, Algo: "soft", Alpha: 0.005}}},
		{"algorithms for every task but one", Grid{Envs: "Copy-v0,Reverse-v0", Bases: "4", Algos: "sparse,soft,Reverse-v0:soft", SparseAlphas: "0.01", SoftAlphas: "0.02"},
			[]Cell{{Env: "Copy-v0", Base: 4, Algo: "sparse", Alpha: 0.01}, {Env: "Copy-v0", Base: 4, Algo: "soft", Alpha: 0.02}, {Env: "Reverse-v0", Base: 4, Algo: "soft", Alpha: 0.02}}},
	}
	for _, c := range ok {
		got, err := c.g.Cells()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: cells %v, want %v", c.name, got, c.want)
		}
	}
	fig, err := Grid{Preset: "figure1", Algos: "sparse,soft", SparseAlphas: "0.05", SoftAlphas: "0.01"}.Cells()
	if err != nil {
		t.Fatal(err)
	}
	if len(fig) != 2*19 {
		t.Errorf("figure1: %d cells, want 38 (19 sizes x 2 algorithms)", len(fig))
	}
	bases := map[string][]int{}
	for _, c := range fig {
		if c.Algo == "sparse" {
			bases[c.Env] = append(bases[c.Env], c.Base)
		}
	}
	wantBases := map[string][]int{"Copy-v0": {5, 10, 20, 40}, "DuplicatedInput-v0": {5, 20, 40, 80}, "RepeatCopy-v0": {5, 10, 20, 40},
		"Reverse-v0": {4, 8, 16, 32}, "ReversedAddition-v0": {5, 8, 12}}
	if fmt.Sprint(bases) != fmt.Sprint(wantBases) {
		t.Errorf("figure1 bases %v, want %v (algorithmic_tasks.md)", bases, wantBases)
	}
	largest, err := Grid{Preset: "figure1-largest", Algos: "sparse", SparseAlphas: "0.05"}.Cells()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, c := range largest {
		got[c.Env] = c.Base
	}
	if want := map[string]int{"Copy-v0": 40, "DuplicatedInput-v0": 80, "RepeatCopy-v0": 40, "Reverse-v0": 32, "ReversedAddition-v0": 12}; fmt.Sprint(got) != fmt.Sprint(want) || len(largest) != 5 {
		t.Errorf("figure1-largest: %d cells, bases %v, want %v", len(largest), got, want)
	}
	bad := []struct {
		name, msg string
		g         Grid
	}{
		{"unknown preset", "unknown preset", Grid{Preset: "fig2", Algos: "sparse", SparseAlphas: "1"}},
		{"preset and envs", "drop --envs", Grid{Preset: "figure1", Envs: "Copy-v0", Algos: "sparse", SparseAlphas: "1"}},
		{"no envs", "give --envs", Grid{Algos: "sparse", SparseAlphas: "1"}},
		{"actions and bases", "exactly one", Grid{Envs: "Copy-v0", Actions: "20", Bases: "5", Algos: "sparse", SparseAlphas: "1"}},
		{"actions not a size", "not that for a base", Grid{Envs: "Copy-v0", Actions: "30", Algos: "sparse", SparseAlphas: "1"}},
		{"unknown env", "unknown task", Grid{Envs: "Cpy-v0", Bases: "5", Algos: "sparse", SparseAlphas: "1"}},
		{"missing weights", "needs --soft-alphas", Grid{Envs: "Copy-v0", Bases: "5", Algos: "sparse,soft", SparseAlphas: "1"}},
		{"bad weight", "not a positive number", Grid{Envs: "Copy-v0", Bases: "5", Algos: "sparse", SparseAlphas: "0"}},
		{"unknown algo", "unknown algorithm", Grid{Envs: "Copy-v0", Bases: "5", Algos: "sparce", SparseAlphas: "1"}},
		{"budget of an absent env", "does not run", Grid{Envs: "Copy-v0", Bases: "5", Algos: "sparse", SparseAlphas: "1", ItersPerEnv: "Reverse-v0:5"}},
		{"tsallis without q", "needs --tsallis-qs", Grid{Envs: "Copy-v0", Bases: "5", Algos: "tsallis", TsallisAlphas: "1"}},
		{"weight of an absent env", "does not run", Grid{Envs: "Copy-v0", Bases: "5", Algos: "sparse", SparseAlphas: "Reverse-v0:1"}},
		{"size of an absent env", "--actions names Reverse-v0, which the sweep does not run", Grid{Envs: "Copy-v0", Actions: "40,Reverse-v0:128", Algos: "sparse", SparseAlphas: "1"}},
		{"a task without a size", "--actions gives no size for Reverse-v0", Grid{Envs: "Copy-v0,Reverse-v0", Actions: "Copy-v0:160", Algos: "sparse", SparseAlphas: "1"}},
		{"bad per-task size", "not a positive integer", Grid{Envs: "Copy-v0", Bases: "Copy-v0:x", Algos: "sparse", SparseAlphas: "1"}},
		{"algorithm of an absent env", "--algos names Reverse-v0, which the sweep does not run", Grid{Envs: "Copy-v0", Bases: "5", Algos: "sparse,Reverse-v0:soft", SparseAlphas: "1", SoftAlphas: "1"}},
		{"a task without an algorithm", "--algos gives no algorithm for Reverse-v0", Grid{Envs: "Copy-v0,Reverse-v0", Bases: "5", Algos: "Copy-v0:sparse", SparseAlphas: "1"}},
		{"unknown per-task algo", "unknown algorithm \"sparce\"", Grid{Envs: "Copy-v0", Bases: "5", Algos: "Copy-v0:sparce", SparseAlphas: "1"}},
		{"a weight where its algorithm does not run", "--sparse-alphas names Reverse-v0, where --algos does not run sparse",
			Grid{Envs: "Copy-v0,Reverse-v0", Bases: "5", Algos: "sparse,Reverse-v0:soft", SparseAlphas: "Copy-v0:1,Reverse-v0:1", SoftAlphas: "1"}},
		{"a task without a weight", "needs --sparse-alphas for Reverse-v0", Grid{Envs: "Copy-v0,Reverse-v0", Bases: "5", Algos: "sparse", SparseAlphas: "Copy-v0:1"}},
		{"bad per-task weight", "not a positive number", Grid{Envs: "Copy-v0", Bases: "5", Algos: "sparse", SparseAlphas: "Copy-v0:-1"}},
		{"unknown control", "unknown control \"anneal\"", Grid{Envs: "Copy-v0", Bases: "5", Algos: "sparse", SparseAlphas: "1", Controls: "fixed,anneal"}},
		{"a control twice", "names auto twice", Grid{Envs: "Copy-v0", Bases: "5", Algos: "sparse", SparseAlphas: "1", Controls: "auto,auto"}},
		{"a schedule that does not start above the weight", "--alpha-start-factor 1", Grid{Envs: "Copy-v0", Bases: "5", Algos: "sparse", SparseAlphas: "1", Controls: "decay", StartFactor: 1}},
	}
	// Every flag an error names is one of the grid's own flags.
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	(&Grid{}).RegisterFlags(fs)
	flagName := regexp.MustCompile(`--([a-z][a-z-]*)`)
	for _, c := range bad {
		_, err := c.g.Cells()
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.msg)
			continue
		}
		for _, m := range flagName.FindAllStringSubmatch(err.Error(), -1) {
			if fs.Lookup(m[1]) == nil {
				t.Errorf("%s: the error %q names --%s, which is not a flag of the grid", c.name, err, m[1])
			}
		}
	}
}

func TestPlan(t *testing.T) {
	cells := []Cell{{Env: "Copy-v0", Base: 5, Algo: "sparse", Alpha: 0.05}, {Env: "DuplicatedInput-v0", Base: 5, Algo: "soft", Alpha: 0.01, Iters: 9}}
	m, err := Plan(Spec{Base: tiny(), Cells: cells, Seeds: 2, FirstSeed: 3, TaskThresholds: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, r := range m.Runs {
		if r.Index != i {
			t.Errorf("run %d has index %d", i, r.Index)
		}
		got = append(got, fmt.Sprintf("%s:%d:%g", r.ID, r.Config.Iters, r.Config.RewardThreshold))
	}
	want := []string{"Copy-A20-sparse-a0.05-s3:6:25", "Copy-A20-sparse-a0.05-s4:6:25", "DuplicatedInput-A20-soft-a0.01-s3:9:9", "DuplicatedInput-A20-soft-a0.01-s4:9:9"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("runs %v, want %v", got, want)
	}
	if _, err := Plan(Spec{Base: tiny(), Cells: append(cells, cells[0]), Seeds: 1}); err == nil || !strings.Contains(err.Error(), "planned twice") {
		t.Errorf("a cell planned twice: %v", err)
	}
	if _, err := Plan(Spec{Base: tiny(), Cells: cells, Seeds: 0}); err == nil {
		t.Error("zero seeds planned")
	}
}

// Each control sets the run's weight fields whatever the base config says, and names its runs.
func TestPlanWeightControls(t *testing.T) {
	base := tiny()
	base.AlphaDecay, base.AlphaAuto = 0.7, true // the decay control's rate; auto is dropped where it does not apply
	cells, err := Grid{Envs: "Copy-v0", Bases: "5", Algos: "sparse", SparseAlphas: "0.05", Controls: "fixed,decay,auto", StartFactor: 10}.Cells()
	if err != nil {
		t.Fatal(err)
	}
	m, err := Plan(Spec{Base: base, Cells: cells, Seeds: 1, FirstSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range m.Runs {
		c := r.Config
		got = append(got, fmt.Sprintf("%s start %g decay %g auto %v control %q", r.ID, c.AlphaStart, c.AlphaDecay, c.AlphaAuto, c.WeightControl()))
	}
	want := []string{
		`Copy-A20-sparse-a0.05-s1 start 0 decay 0 auto false control ""`,
		`Copy-A20-sparse-a0.05-from0.5-s1 start 0.5 decay 0.7 auto false control "from 0.5, ×0.7/100 it"`,
		`Copy-A20-sparse-a0.05-auto-s1 start 0 decay 0 auto true control "auto"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("runs\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	base.AlphaDecay = 0
	if _, err := Plan(Spec{Base: base, Cells: cells, Seeds: 1}); err == nil || !strings.Contains(err.Error(), "needs alpha_decay") {
		t.Errorf("a schedule without a rate: %v", err)
	}
	// Without --alpha-controls the base config's control holds for every cell, as before.
	base.AlphaStart, base.AlphaDecay, base.AlphaAuto = 0.5, 0.9, false
	m, err = Plan(Spec{Base: base, Cells: []Cell{{Env: "Copy-v0", Base: 5, Algo: "sparse", Alpha: 0.05}}, Seeds: 1, FirstSeed: 1})
	if err != nil || m.Runs[0].Config.AlphaStart != 0.5 || m.Runs[0].ID != "Copy-A20-sparse-a0.05-from0.5-s1" {
		t.Errorf("the base config's schedule: %+v, %v", m.Runs, err)
	}
}

func TestResolveIndex(t *testing.T) {
	cases := []struct {
		name         string
		flag, offset int
		env          map[string]string
		want         int
		msg          string
	}{
		{"flag", 2, 0, nil, 2, ""},
		{"flag wins over the environment", 1, 0, map[string]string{"SLURM_ARRAY_TASK_ID": "3"}, 1, ""},
		{"slurm", -1, 0, map[string]string{"SLURM_ARRAY_TASK_ID": "3"}, 3, ""},
		{"slurm with offset", -1, 2, map[string]string{"SLURM_ARRAY_TASK_ID": "1"}, 3, ""},
		{"kubernetes", -1, 0, map[string]string{"JOB_COMPLETION_INDEX": "0"}, 0, ""},
		{"none", -1, 0, nil, 0, "no run index"},
		{"garbage", -1, 0, map[string]string{"JOB_COMPLETION_INDEX": "x"}, 0, "not an index"},
		{"out of range", 4, 0, nil, 0, "out of range: the manifest has 4 runs"},
		{"out of range from slurm", -1, 0, map[string]string{"SLURM_ARRAY_TASK_ID": "7"}, 0, "from SLURM_ARRAY_TASK_ID"},
	}
	for _, c := range cases {
		got, err := ResolveIndex(c.flag, c.offset, 4, func(k string) string { return c.env[k] })
		if c.msg != "" {
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("%s: %d, %v; want an error containing %q", c.name, got, err, c.msg)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %d, %v; want %d", c.name, got, err, c.want)
		}
	}
}

func planTiny(t *testing.T, dir string, cells ...Cell) Manifest {
	t.Helper()
	if len(cells) == 0 {
		cells = []Cell{{Env: "Copy-v0", Base: 2, Algo: "sparse", Alpha: 0.05}, {Env: "Copy-v0", Base: 2, Algo: "soft", Alpha: 0.02}}
	}
	m, err := Plan(Spec{Base: tiny(), Cells: cells, Seeds: 1, FirstSeed: 1, TaskThresholds: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, m); err != nil {
		t.Fatal(err)
	}
	return m
}

func quiet() RunOptions {
	return RunOptions{Registry: registry.Default(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

func TestWriteRefusesAnotherSweep(t *testing.T) {
	dir := t.TempDir()
	m := planTiny(t, dir)
	if err := Write(dir, m); err != nil {
		t.Errorf("writing the same manifest again: %v", err)
	}
	m2 := m
	m2.Runs = append([]Run(nil), m.Runs...)
	m2.Runs[1].Config.LearningRate = 0.1
	err := Write(dir, m2)
	if err == nil || !strings.Contains(err.Error(), "learning_rate") {
		t.Errorf("a changed plan over an existing manifest: %v, want a refusal naming learning_rate", err)
	}
	got, err := Load(dir)
	if err != nil || got.Runs[1].Config.LearningRate != m.Runs[1].Config.LearningRate {
		t.Errorf("the manifest changed: %v", err)
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "plan the sweep first") {
		t.Errorf("loading a directory without a manifest: %v", err)
	}
}

func TestLocal(t *testing.T) {
	var running, peak atomic.Int32
	var mu sync.Mutex
	var seen []int
	err := Local(context.Background(), 2, []int{0, 1, 2, 3, 4}, func(_ context.Context, i int) error {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		mu.Lock()
		seen = append(seen, i)
		mu.Unlock()
		if i == 3 {
			return errors.New("boom")
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "run 3: boom") {
		t.Errorf("errors: %v", err)
	}
	if len(seen) != 5 || peak.Load() > 2 {
		t.Errorf("ran %v with up to %d at once, want all 5 with at most 2", seen, peak.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var n atomic.Int32
	err = Local(ctx, 1, []int{0, 1}, func(context.Context, int) error { n.Add(1); return nil })
	if n.Load() != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled runner launched %d, err %v", n.Load(), err)
	}
	if Local(context.Background(), 0, nil, nil) == nil {
		t.Error("zero at once accepted")
	}
}

// A manifest may be planned again with larger budgets (its runs resume to them), never smaller.
func TestWriteGrowsBudgets(t *testing.T) {
	dir := t.TempDir()
	plan := func(iters int) Manifest {
		c := tiny()
		c.Iters = iters
		m, err := Plan(Spec{Base: c, Cells: []Cell{{Env: "Copy-v0", Base: 2, Algo: config.AlgoSparse, Alpha: 0.05}}, Seeds: 2, FirstSeed: 1})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if err := Write(dir, plan(4)); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, plan(8)); err != nil {
		t.Errorf("a larger budget: %v", err)
	}
	if err := Write(dir, plan(4)); err == nil || !strings.Contains(err.Error(), "iters: 8 -> 4") {
		t.Errorf("a smaller budget: %v, want a refusal naming iters", err)
	}
	if m, err := Load(dir); err != nil || m.Runs[0].Config.Iters != 8 {
		t.Errorf("the manifest after: %v", err)
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
