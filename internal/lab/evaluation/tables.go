package evaluation

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/internal/lab/analysis"
	"github.com/sparsepcl/sparsepcl/internal/lab/sweep"
)

// The algorithmic tasks' results tables (pcl tables, docs/results/tables.json), read by the steady
// rule from the finished runs that docs/results keeps: a run directory's config.json and
// metrics.csv, without the sweep's manifest or the run's checkpoint.
const (
	// KindSizes is a row per task size and algorithm: the evaluation report's "Per size" table
	// (steady passes, the ever-reached and sampled columns, the last-10% greedy mean ± sample
	// std and its 95% interval) over every arm's runs, one configuration per algorithm and size.
	KindSizes = "sizes"
	// KindCredit is a row per task size with, per algorithm, a column per arm (a lever set): its
	// steady passes of its finished seeds and their mean last-10% greedy reward.
	KindCredit = "credit"
	// KindFigure1 is the paper's Figure 1 as a table: a row per task with its sizes from the
	// smallest, each cell sparse and soft PCL's steady passes at one size, the larger in bold (over
	// as many finished seeds: a size still running is not compared). Each cell names its size: a
	// size without runs leaves no gap, so columns are not sizes.
	KindFigure1 = "figure1"
)

// TableKinds are the kinds of table RenderTable makes: analysis's and this package's.
func TableKinds() []string {
	return append(analysis.TableKinds(), KindSizes, KindCredit, KindFigure1)
}

// RenderTable computes the table of spec from the runs under root: the algorithmic tasks' kinds
// here, the others by analysis.RenderTable.
func RenderTable(root string, spec analysis.TableSpec) (string, error) {
	switch spec.Kind {
	case KindSizes, KindFigure1:
		cs, err := compareArms(root, spec)
		if err != nil {
			return "", fmt.Errorf("tables: %s: %w", spec.Name, err)
		}
		var b strings.Builder
		if spec.Kind == KindFigure1 {
			writeFigure1Table(&b, cs)
			return b.String(), nil
		}
		writeSizeTable(&b, cs)
		b.WriteString("\nThe last-10% greedy reward: mean ± sample std (n − 1) over the finished seeds, with the 95% Student-t interval of the mean; " +
			"length: the curriculum's level at the end. Generated from the runs by `pcl tables`.\n")
		return b.String(), nil
	case KindCredit:
		return creditTable(root, spec)
	}
	return analysis.RenderTable(root, spec)
}

// compareArms pairs sparse and soft PCL by task size over the runs of every arm of spec together.
func compareArms(root string, spec analysis.TableSpec) ([]Comparison, error) {
	var runs []RunResult
	for _, a := range spec.Arms {
		rs, err := readArm(root, a)
		if err != nil {
			return nil, err
		}
		runs = append(runs, rs...)
	}
	return CompareSizes(Groups(runs))
}

// writeFigure1Table writes KindFigure1's table of cs (in CompareSizes's order: by task, then size).
func writeFigure1Table(b *strings.Builder, cs []Comparison) {
	var tasks [][]Comparison
	for _, c := range cs {
		if n := len(tasks); n == 0 || tasks[n-1][0].Env != c.Env {
			tasks = append(tasks, nil)
		}
		tasks[len(tasks)-1] = append(tasks[len(tasks)-1], c)
	}
	cols := 1 // the header's one column, also without runs
	for _, t := range tasks {
		cols = max(cols, len(t))
	}
	b.WriteString("| task | sparse · soft by \\|A\\|, smallest first |" + strings.Repeat(" |", cols-1))
	b.WriteString("\n|---|" + strings.Repeat("---|", cols) + "\n")
	passes := func(g *Group) string {
		if g == nil || g.Finished == 0 {
			return "–"
		}
		return fmt.Sprintf("%d/%d", g.Passed, g.Finished)
	}
	for _, t := range tasks {
		fmt.Fprintf(b, "| %s |", task(t[0].Env))
		for _, c := range t {
			// Pass counts compare only over the same number of finished seeds.
			even := c.Sparse != nil && c.Soft != nil && c.Sparse.Finished > 0 && c.Sparse.Finished == c.Soft.Finished
			fmt.Fprintf(b, " %d: %s · %s |", c.Actions, boldIf(passes(c.Sparse), even && c.Sparse.Passed > c.Soft.Passed),
				boldIf(passes(c.Soft), even && c.Soft.Passed > c.Sparse.Passed))
		}
		b.WriteString(strings.Repeat(" |", cols-len(t)) + "\n")
	}
	b.WriteString("\nEach cell: the size |A|, then the seeds that pass by the steady rule of those finished, sparse PCL's · soft PCL's, the larger in bold where both finished as many. " +
		"Generated from the runs by `pcl tables`.\n")
}

// ReadRunDirs reads finished runs from their directories alone, as docs/results keeps them
// (<sweep>/runs/<run>/ with config.json and metrics.csv), each as its sweep's report reads it. A run
// short of its budget is an error.
func ReadRunDirs(dirs []string) ([]RunResult, error) {
	out := make([]RunResult, 0, len(dirs))
	for _, d := range dirs {
		if filepath.Base(filepath.Dir(d)) != sweep.RunsDir {
			return nil, fmt.Errorf("%s is not a sweep's run directory (<sweep>/%s/<run>)", d, sweep.RunsDir)
		}
		cfg, err := runstore.Dir(d).Config()
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", d, err)
		}
		r := readRun(filepath.Dir(filepath.Dir(d)), sweep.Run{ID: filepath.Base(d), Config: cfg})
		switch {
		case r.Err != nil:
			return nil, fmt.Errorf("run %s: %w", d, r.Err)
		case r.Status.State != sweep.Finished:
			return nil, fmt.Errorf("run %s is not finished (%d of %d iterations in its metrics)", d, len(r.Rows), cfg.Iters)
		}
		out = append(out, r)
	}
	return out, nil
}

func readArm(root string, a analysis.ArmSpec) ([]RunResult, error) {
	dirs, err := a.Dirs(root)
	if err != nil {
		return nil, err
	}
	runs, err := ReadRunDirs(dirs)
	if err != nil {
		return nil, fmt.Errorf("arm %q: %w", a.Label, err)
	}
	return runs, nil
}

// creditTable is KindCredit's table: a row per task size, and per algorithm a column per arm.
func creditTable(root string, spec analysis.TableSpec) (string, error) {
	type key struct {
		env  string
		base int
		algo config.Algo
	}
	cells := make([]map[key]*Group, len(spec.Arms))
	var sizes []Comparison // the sizes, in CompareSizes's order
	for i, a := range spec.Arms {
		runs, err := readArm(root, a)
		if err != nil {
			return "", fmt.Errorf("tables: %s: %w", spec.Name, err)
		}
		cells[i] = map[key]*Group{}
		for _, g := range Groups(runs) {
			k := key{g.Env, g.Base, g.Algo}
			if prev := cells[i][k]; prev != nil {
				return "", fmt.Errorf("tables: %s: arm %q has two %s PCL configurations at %s |A| = %d (%s and %s)",
					spec.Name, a.Label, g.Algo, task(g.Env), g.Actions, describe(prev), describe(g))
			}
			cells[i][k] = g
			if !slices.ContainsFunc(sizes, func(c Comparison) bool { return c.Env == g.Env && c.Base == g.Base }) {
				sizes = append(sizes, Comparison{Env: g.Env, Base: g.Base, Actions: g.Actions})
			}
		}
	}
	slices.SortStableFunc(sizes, func(a, b Comparison) int {
		return cmp.Or(cmp.Compare(a.Env, b.Env), cmp.Compare(a.Actions, b.Actions))
	})
	algos := []config.Algo{config.AlgoSparse, config.AlgoSoft}
	var b strings.Builder
	b.WriteString("| task | \\|A\\| |")
	for _, algo := range algos {
		for i, a := range spec.Arms {
			if i == 0 {
				fmt.Fprintf(&b, " %s: %s |", algo, a.Label)
			} else {
				fmt.Fprintf(&b, " %s |", a.Label)
			}
		}
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(algos)*len(spec.Arms)) + "\n")
	for _, s := range sizes {
		fmt.Fprintf(&b, "| %s | %d |", task(s.Env), s.Actions)
		for _, algo := range algos {
			for i := range spec.Arms {
				g := cells[i][key{s.Env, s.Base, algo}]
				if g == nil || g.Finished == 0 {
					b.WriteString(" – |")
					continue
				}
				greedy := num(g.GreedyMean, 1)
				if greedy == "-0.0" {
					greedy = "0.0"
				}
				fmt.Fprintf(&b, " %s, %s |", boldIf(fmt.Sprintf("%d/%d", g.Passed, g.Finished), g.Passed > 0), greedy)
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\nPer arm and algorithm: the seeds that pass by the steady rule of those finished, and their mean last-10% greedy reward. Generated from the runs by `pcl tables`.\n")
	return b.String(), nil
}
