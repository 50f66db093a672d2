package evaluation

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/internal/lab/analysis"
	"github.com/sparsepcl/sparsepcl/internal/lab/sweep"
)

// committedCopy copies run r of the sweep in dir as docs/results keeps it: config.json,
// metrics.csv and run.json under root/name/runs/<id>.
func committedCopy(t *testing.T, dir string, r sweep.Run, root, name string) string {
	t.Helper()
	to := filepath.Join(root, name, sweep.RunsDir, r.ID)
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{runstore.ConfigFile, runstore.MetricsFile, "run.json"} {
		b, err := os.ReadFile(filepath.Join(sweep.RunDir(dir, r), f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

// The algorithmic tasks' tables read committed run directories as the sweep's own report reads
// the sweep: the "sizes" table is the evaluation's "Per size" table of the same runs, and the
// "credit" table counts each arm's steady passes per algorithm, with "–" where an arm has no run.
func TestTablesFromCommittedRuns(t *testing.T) {
	dir, root := t.TempDir(), t.TempDir()
	base := tiny()
	base.Iters, base.EvalEvery = 20, 1
	m, err := sweep.Plan(sweep.Spec{Base: base, Cells: []sweep.Cell{{Env: "Copy-v0", Base: 2, Algo: "sparse", Alpha: 0.05}, {Env: "Copy-v0", Base: 2, Algo: "soft", Alpha: 0.02}},
		Seeds: 2, FirstSeed: 1, TaskThresholds: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := sweep.Write(dir, m); err != nil {
		t.Fatal(err)
	}
	for i, r := range m.Runs {
		if _, err := sweep.RunIndex(context.Background(), dir, i, quiet()); err != nil {
			t.Fatal(err)
		}
		committedCopy(t, dir, r, root, "all")
		if r.Config.Algo == "sparse" {
			committedCopy(t, dir, r, root, "sparse-only")
		}
	}
	_, results, err := Gather(dir)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := CompareSizes(Groups(results))
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	writeSizeTable(&want, cs)
	sizes := analysis.TableSpec{Name: "s", File: "x.md", Kind: KindSizes, Arms: []analysis.ArmSpec{{Label: "all", Runs: []string{"all/runs/*"}}}}
	got, err := RenderTable(root, sizes)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, want.String()) || !strings.Contains(got, "Generated from the runs by `pcl tables`") {
		t.Errorf("sizes table from the committed runs:\n%s\nwant it to open with the sweep's own:\n%s", got, want.String())
	}

	var wantFig strings.Builder
	writeFigure1Table(&wantFig, cs)
	fig := analysis.TableSpec{Name: "f", File: "x.md", Kind: KindFigure1, Arms: []analysis.ArmSpec{{Label: "all", Runs: []string{"all/runs/*"}}}}
	if got, err := RenderTable(root, fig); err != nil || got != wantFig.String() || !strings.Contains(got, fmt.Sprintf("| Copy | %d: ", cs[0].Actions)) {
		t.Errorf("figure1 table from the committed runs (%v):\n%s\nwant:\n%s", err, got, wantFig.String())
	}

	// The evaluation reads the committed copy as it reads the sweep.
	fromCopy, err := GatherGroups([]string{filepath.Join(root, "all")})
	if err != nil {
		t.Fatal(err)
	}
	csCopy, err := CompareSizes(fromCopy)
	if err != nil {
		t.Fatal(err)
	}
	var copyTable strings.Builder
	writeSizeTable(&copyTable, csCopy)
	if copyTable.String() != want.String() {
		t.Errorf("evaluation of the committed copy:\n%s\nwant the sweep's:\n%s", copyTable.String(), want.String())
	}
	if _, err := GatherGroups([]string{root}); err == nil || !strings.Contains(err.Error(), "no run directories under runs/ to read as a results copy") {
		t.Errorf("a directory that is neither a sweep nor a copy: %v", err)
	}

	credit := analysis.TableSpec{Name: "c", File: "x.md", Kind: KindCredit, Arms: []analysis.ArmSpec{
		{Label: "both", Runs: []string{"all/runs/*"}}, {Label: "sparse only", Runs: []string{"sparse-only/runs/*"}}}}
	got, err = RenderTable(root, credit)
	if err != nil {
		t.Fatal(err)
	}
	cell := func(g *Group) string {
		return fmt.Sprintf("%s, %s", boldIf(fmt.Sprintf("%d/2", g.Passed), g.Passed > 0), num(g.GreedyMean, 1))
	}
	sp, so := cell(cs[0].Sparse), cell(cs[0].Soft)
	for _, line := range []string{
		"| task | \\|A\\| | sparse: both | sparse only | soft: both | sparse only |",
		fmt.Sprintf("| Copy | %d | %s | %s | %s | – |", cs[0].Actions, sp, sp, so),
	} {
		if !strings.Contains(got, line) {
			t.Errorf("credit table lacks %q:\n%s", line, got)
		}
	}

	// A run cut short of its budget, a directory outside a sweep's runs/, two configurations of one
	// algorithm at a size: each an error that says which.
	short := committedCopy(t, dir, m.Runs[0], root, "short")
	rows, err := os.ReadFile(filepath.Join(short, runstore.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(short, runstore.MetricsFile), []byte(strings.Join(strings.SplitAfter(string(rows), "\n")[:4], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	twice := committedCopy(t, dir, m.Runs[0], root, "twice")
	other := filepath.Join(root, "twice", sweep.RunsDir, "other")
	if err := os.CopyFS(other, os.DirFS(twice)); err != nil {
		t.Fatal(err)
	}
	c, err := runstore.Dir(other).Config() // as the trainer wrote it: the network resolved
	if err != nil {
		t.Fatal(err)
	}
	c.Alpha = 0.5
	if err := runstore.Dir(other).WriteConfig(c); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		spec analysis.TableSpec
		want string
	}{
		{"short", analysis.TableSpec{Name: "s", Kind: KindSizes, Arms: []analysis.ArmSpec{{Label: "short", Runs: []string{"short/runs/*"}}}}, "is not finished (3 of 20 iterations"},
		{"outside runs/", analysis.TableSpec{Name: "s", Kind: KindSizes, Arms: []analysis.ArmSpec{{Label: "flat", Runs: []string{"all"}}}}, "is not a sweep's run directory"},
		{"no match", analysis.TableSpec{Name: "s", Kind: KindCredit, Arms: []analysis.ArmSpec{{Label: "none", Runs: []string{"nothing/runs/*"}}}}, "no run directory matches"},
		{"two sizes configurations", analysis.TableSpec{Name: "s", Kind: KindSizes, Arms: []analysis.ArmSpec{{Label: "twice", Runs: []string{"twice/runs/*"}}}}, "two sparse PCL configurations at Copy"},
		{"two credit configurations", analysis.TableSpec{Name: "s", Kind: KindCredit, Arms: []analysis.ArmSpec{{Label: "twice", Runs: []string{"twice/runs/*"}}}}, `arm "twice" has two sparse PCL configurations`},
	} {
		if _, err := RenderTable(root, tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}

// A spec of this package's kinds reads with TableKinds and is refused by analysis's alone.
func TestTableKinds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tables.json")
	if err := os.WriteFile(path, []byte(`[{"name": "f1", "file": "README.md", "kind": "sizes", "arms": [{"label": "eval", "runs": ["x/runs/*"]}]}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := analysis.ReadTableSpecs(path, TableKinds()); err != nil {
		t.Errorf("kind sizes with experiment's kinds: %v", err)
	}
	if _, err := analysis.ReadTableSpecs(path, analysis.TableKinds()); err == nil || !strings.Contains(err.Error(), `kind "sizes"`) {
		t.Errorf("kind sizes with analysis's kinds: %v, want refused", err)
	}
}

// Figure 1's table lists each task's sizes from the smallest, counts steady passes of the
// finished seeds, bolds the algorithm ahead (neither on a tie, with one side missing, or over
// different numbers of finished seeds) and shows "–" for an algorithm without finished runs.
func TestFigure1Table(t *testing.T) {
	g := func(passed, finished int) *Group { return &Group{Passed: passed, Finished: finished} }
	cs := []Comparison{
		{Env: "Copy-v0", Actions: 20, Sparse: g(3, 3), Soft: g(3, 3)},
		{Env: "Copy-v0", Actions: 40, Sparse: g(2, 3), Soft: g(3, 3)},
		{Env: "Copy-v0", Actions: 160, Sparse: g(5, 5), Soft: g(2, 5)},
		{Env: "Copy-v0", Actions: 320, Sparse: g(3, 3), Soft: g(1, 1)},
		{Env: "ReversedAddition-v0", Actions: 40, Sparse: g(1, 3)},
		{Env: "ReversedAddition-v0", Actions: 96, Sparse: g(0, 5), Soft: g(0, 0)},
	}
	var b strings.Builder
	writeFigure1Table(&b, cs)
	for _, line := range []string{
		"| task | sparse · soft by \\|A\\|, smallest first | | | |",
		"|---|---|---|---|---|",
		"| Copy | 20: 3/3 · 3/3 | 40: 2/3 · **3/3** | 160: **5/5** · 2/5 | 320: 3/3 · 1/1 |",
		"| ReversedAddition | 40: 1/3 · – | 96: 0/5 · – | | |",
	} {
		if !strings.Contains(b.String(), line+"\n") {
			t.Errorf("figure1 table lacks the line %q:\n%s", line, b.String())
		}
	}
}
