package evaluation

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sparsepcl/sparsepcl/agent/atomicfile"
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/internal/lab/analysis"
	"github.com/sparsepcl/sparsepcl/internal/lab/sweep"
)

// The evaluation report of issue 48 (docs/results/figure1-levers/PROTOCOL.md, "Evaluation"):
// sparse against soft PCL per task size, each at its chosen configuration, gathered from the
// sweeps that ran them (one sweep per lever set and budget, so a size's two algorithms may come
// from two sweeps).

// EvaluationFile is the file WriteEvaluation writes.
const EvaluationFile = "evaluation.md"

// GoalPasses is the goal at a largest size: sparse PCL passes by the steady rule on at
// least this many of GoalSeeds evaluation seeds.
const (
	GoalPasses = 4
	GoalSeeds  = 5
)

// Comparison is one task size of the evaluation: sparse and soft PCL's groups (either nil when
// the sweeps hold none) and their pairing by seed.
type Comparison struct {
	Env          string
	Base         int
	Actions      int
	Sparse, Soft *Group
	// Seeds are the seeds that both algorithms finished, in order; Diffs the differences of their
	// last-10% greedy means on those seeds (sparse − soft), and Paired the Interval of Diffs.
	Seeds  []int64
	Diffs  []float64
	Paired analysis.Interval
}

// SparseAhead is the protocol's comparison: sparse PCL passes on more evaluation seeds than soft.
// While one algorithm has finished fewer seeds than the other (a stage under way), the comparison
// is decided only if those missing seeds cannot change it, however they end; decided is false
// otherwise, and without both algorithms.
func (c Comparison) SparseAhead() (ahead, decided bool) {
	if c.Sparse == nil || c.Soft == nil {
		return false, false
	}
	n := max(c.Sparse.Finished, c.Soft.Finished)
	sparseBest, softBest := c.Sparse.Passed+n-c.Sparse.Finished, c.Soft.Passed+n-c.Soft.Finished
	switch {
	case c.Sparse.Passed > softBest:
		return true, true
	case sparseBest <= c.Soft.Passed:
		return false, true
	}
	return false, false
}

// Goal reports whether sparse PCL meets the goal at this size (at least GoalPasses steady
// passes); ok is false unless it has GoalSeeds finished seeds, where the goal is not defined.
func (c Comparison) Goal() (met, ok bool) {
	if c.Sparse == nil || c.Sparse.Finished != GoalSeeds {
		return false, false
	}
	return c.Sparse.Passed >= GoalPasses, true
}

// GatherGroups reads the sweeps in dirs and returns their groups (Groups), sweep by sweep. A
// directory without a manifest is read as docs/results keeps a sweep: its finished runs under
// runs/ (ReadRunDirs).
func GatherGroups(dirs []string) ([]*Group, error) {
	var out []*Group
	for _, d := range dirs {
		results, err := gatherSweepOrCopy(d)
		if err != nil {
			return nil, err // names the sweep or the run
		}
		out = append(out, Groups(results)...)
	}
	return out, nil
}

func gatherSweepOrCopy(dir string) ([]RunResult, error) {
	if _, err := os.Stat(filepath.Join(dir, sweep.ManifestFile)); err == nil || !errors.Is(err, fs.ErrNotExist) {
		_, results, err := Gather(dir)
		return results, err
	}
	runs, err := filepath.Glob(filepath.Join(dir, sweep.RunsDir, "*"))
	if err != nil || len(runs) == 0 {
		return nil, fmt.Errorf("sweep: %s has no %s (plan the sweep first: pcl sweep plan --out %s ...) and no run directories under %s/ to read as a results copy",
			dir, sweep.ManifestFile, dir, sweep.RunsDir)
	}
	return ReadRunDirs(runs)
}

// CompareSizes pairs sparse and soft PCL's groups by task size, ordered by task, then size.
// Two groups of one algorithm at one size (two weights, lever sets or budgets) are an error: the
// evaluation has one configuration per algorithm and size. Tsallis groups are not compared.
func CompareSizes(groups []*Group) ([]Comparison, error) {
	type key struct {
		env  string
		base int
	}
	var order []key
	byKey := map[key]*Comparison{}
	for _, g := range groups {
		if g.Algo != config.AlgoSparse && g.Algo != config.AlgoSoft {
			continue
		}
		k := key{g.Env, g.Base}
		c := byKey[k]
		if c == nil {
			c = &Comparison{Env: g.Env, Base: g.Base, Actions: g.Actions}
			byKey[k] = c
			order = append(order, k)
		}
		slot := &c.Sparse
		if g.Algo == config.AlgoSoft {
			slot = &c.Soft
		}
		if *slot != nil {
			return nil, fmt.Errorf("evaluation: two %s PCL configurations at %s |A| = %d (%s and %s): give one per algorithm and size",
				g.Algo, strings.TrimSuffix(g.Env, "-v0"), g.Actions, describe(*slot), describe(g))
		}
		*slot = g
	}
	out := make([]Comparison, 0, len(order))
	for _, k := range order {
		c := byKey[k]
		c.pair()
		out = append(out, *c)
	}
	slices.SortStableFunc(out, func(a, b Comparison) int {
		return cmp.Or(cmp.Compare(a.Env, b.Env), cmp.Compare(a.Actions, b.Actions))
	})
	return out, nil
}

// pair fills Seeds, Diffs and Paired from the finished runs of both algorithms.
func (c *Comparison) pair() {
	c.Paired = analysis.SampleInterval(nil)
	if c.Sparse == nil || c.Soft == nil {
		return
	}
	soft := finishedGreedy(c.Soft)
	sparse := finishedGreedy(c.Sparse)
	for _, seed := range slices.Sorted(maps.Keys(sparse)) {
		s, ok := soft[seed]
		if !ok || math.IsNaN(s) || math.IsNaN(sparse[seed]) {
			continue
		}
		c.Seeds = append(c.Seeds, seed)
		c.Diffs = append(c.Diffs, sparse[seed]-s)
	}
	c.Paired = analysis.SampleInterval(c.Diffs)
}

// finishedGreedy is the last-10% greedy mean of each finished run of g, by seed.
func finishedGreedy(g *Group) map[int64]float64 {
	out := map[int64]float64{}
	for _, r := range g.Runs {
		if finished(r) {
			out[r.Run.Config.Seed] = r.FinalGreedy
		}
	}
	return out
}

func finished(r RunResult) bool { return r.Status.State == sweep.Finished && r.Err == nil }

// LeversOf is the lever set a run's config turns on (PROTOCOL.md: the advantage-prioritised
// replay, exploring copies).
func LeversOf(c config.Config) LeverSet {
	adv, explore := c.ReplayPriority == config.PriorityAdvantage, c.Explore > 0
	switch {
	case adv && explore:
		return LeversBoth
	case adv:
		return LeversAdvantage
	case explore:
		return LeversExplore
	}
	return LeversNone
}

// groupLevers is the lever set of g's runs ("" without runs).
func groupLevers(g *Group) LeverSet {
	if len(g.Runs) == 0 {
		return ""
	}
	return LeversOf(g.Runs[0].Run.Config)
}

func describe(g *Group) string {
	return fmt.Sprintf("levers %s, weight %g, %d iterations", groupLevers(g), g.Alpha, g.Iters)
}

// WriteEvaluation writes the evaluation report of cs into out/evaluation.md, titled title: the
// table per size (steady passes, the ever-reached and sampled columns, the last-10% greedy mean
// with its sample std and 95% interval), sparse against soft (the protocol's comparison, the paired
// differences and the goal), every seed, and the figures: a grid of every size (sampled and
// greedy reward) and one figure per size.
func WriteEvaluation(out, title string, cs []Comparison) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("evaluation: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", title)
	b.WriteString("**Steady pass**: a run passes when its mean greedy reward over the last 10% of its iterations is at or above the task's threshold, " +
		"with the curriculum at its top level. \"greedy ever\" counts the seeds whose greedy evaluation reached the threshold once, " +
		"\"sampled\" those whose mean sampled reward did; neither is a pass. Means are over the finished seeds, ± the sample standard deviation (n − 1), " +
		"with the two-sided 95% Student-t interval of the mean (docs/results/figure1-levers/PROTOCOL.md).\n\n")
	b.WriteString("## Per size\n\n")
	writeSizeTable(&b, cs)
	writeVersusTable(&b, cs)
	writeSeedTable(&b, cs)
	var groups []*Group
	for _, c := range cs {
		for _, g := range []*Group{c.Sparse, c.Soft} {
			if g != nil {
				groups = append(groups, g)
			}
		}
	}
	figs, err := figures(out, title, groups)
	if err != nil {
		return fmt.Errorf("evaluation: %w", err)
	}
	if len(figs) > 0 {
		b.WriteString("\n## Figures\n\nThe mean over the seeds with the min-max band, sparse against soft PCL at each size: " +
			"the sampled reward (an exploring run's counts its random actions) and the greedy evaluations (the policy alone).\n\n")
		for _, f := range figs {
			fmt.Fprintf(&b, "![%s](%s)\n", strings.TrimSuffix(f, ".png"), f)
		}
	}
	if err := atomicfile.WriteFile(filepath.Join(out, EvaluationFile), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("evaluation: %w", err)
	}
	return nil
}

// writeSizeTable writes the table of cs with a row per size and algorithm (the evaluation's "Per
// size", and pcl tables' kind "sizes").
func writeSizeTable(b *strings.Builder, cs []Comparison) {
	b.WriteString("| task | \\|A\\| | algo | levers | weight | iters | seeds | steady pass | greedy ever | sampled | last-10% greedy | 95% interval | length |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range cs {
		for _, g := range []*Group{c.Sparse, c.Soft} {
			if g == nil {
				continue
			}
			iv := analysis.SampleInterval(groupGreedy(g))
			fmt.Fprintf(b, "| %s | %d | %s | %s | %g | %d | %d | %s | %d/%d | %d/%d | %s | %s | %s |\n",
				task(c.Env), c.Actions, g.Algo, groupLevers(g), g.Alpha, g.Iters, g.Finished,
				boldIf(fmt.Sprintf("%d/%d", g.Passed, g.Finished), g.Finished > 0 && g.Passed > 0), g.GreedySolved, g.Finished, g.Solved, g.Finished,
				pmSample(iv), interval(iv), lengthRange(g))
		}
	}
}

func writeVersusTable(b *strings.Builder, cs []Comparison) {
	b.WriteString("\n## Sparse against soft\n\n")
	b.WriteString("\"ahead\" is the protocol's comparison: sparse PCL is ahead at a size when it passes on more seeds (while one has seeds to finish, only if they cannot change it). " +
		"The paired difference is of the last-10% greedy means, sparse − soft, seed by seed. " +
		fmt.Sprintf("The goal is sparse PCL passing on at least %d of %d seeds.\n\n", GoalPasses, GoalSeeds))
	b.WriteString("| task | \\|A\\| | sparse steady | soft steady | sparse ahead | paired difference | 95% interval | sparse higher | goal |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range cs {
		if c.Sparse == nil || c.Soft == nil {
			continue
		}
		ahead := "– (seeds to finish)"
		switch yes, decided := c.SparseAhead(); {
		case decided && yes:
			ahead = "**yes**"
		case decided:
			ahead = "no"
		}
		goal := "–"
		if met, ok := c.Goal(); ok {
			goal = map[bool]string{true: "**met**", false: "not met"}[met]
		}
		higher := 0
		for _, d := range c.Diffs {
			if d > 0 {
				higher++
			}
		}
		fmt.Fprintf(b, "| %s | %d | %d/%d | %d/%d | %s | %s | %s | %d/%d | %s |\n", task(c.Env), c.Actions,
			c.Sparse.Passed, c.Sparse.Finished, c.Soft.Passed, c.Soft.Finished, ahead, signedPm(c.Paired), interval(c.Paired),
			higher, len(c.Diffs), goal)
	}
}

func writeSeedTable(b *strings.Builder, cs []Comparison) {
	b.WriteString("\n## Per seed\n\nThe last-10% greedy mean of each finished run (✓: a steady pass) and the curriculum length it ended at.\n\n")
	b.WriteString("| task | \\|A\\| | seed | sparse | sparse length | soft | soft length | sparse − soft |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, c := range cs {
		runs := map[int64][2]*RunResult{}
		for i, g := range []*Group{c.Sparse, c.Soft} {
			if g == nil {
				continue
			}
			for j := range g.Runs {
				if r := &g.Runs[j]; finished(*r) {
					pair := runs[r.Run.Config.Seed]
					pair[i] = r
					runs[r.Run.Config.Seed] = pair
				}
			}
		}
		seeds := make([]int64, 0, len(runs))
		for s := range runs {
			seeds = append(seeds, s)
		}
		slices.Sort(seeds)
		for _, s := range seeds {
			p := runs[s]
			diff := "–"
			if p[0] != nil && p[1] != nil && !math.IsNaN(p[0].FinalGreedy) && !math.IsNaN(p[1].FinalGreedy) {
				diff = signedNum(p[0].FinalGreedy - p[1].FinalGreedy)
			}
			fmt.Fprintf(b, "| %s | %d | %d | %s | %s | %s | %s | %s |\n", task(c.Env), c.Actions, s,
				seedGreedy(p[0]), seedLength(p[0]), seedGreedy(p[1]), seedLength(p[1]), diff)
		}
	}
}

// groupGreedy is the last-10% greedy means of g's finished runs that have evaluations.
func groupGreedy(g *Group) []float64 {
	var out []float64
	for _, r := range g.Runs {
		if finished(r) && !math.IsNaN(r.FinalGreedy) {
			out = append(out, r.FinalGreedy)
		}
	}
	return out
}

func task(env string) string { return strings.TrimSuffix(env, "-v0") }

func boldIf(s string, bold bool) string {
	if bold {
		return "**" + s + "**"
	}
	return s
}

func lengthRange(g *Group) string {
	switch {
	case g.Finished == 0 || g.LevelMax == 0:
		return "–"
	case g.LevelMin == g.LevelMax:
		return strconv.Itoa(g.LevelMax)
	}
	return fmt.Sprintf("%d-%d", g.LevelMin, g.LevelMax)
}

// pmSample is "mean ± sample std" ("mean" alone for one value, "–" for none).
func pmSample(iv analysis.Interval) string {
	switch {
	case iv.N == 0:
		return "–"
	case iv.N == 1:
		return num(iv.Mean, 2)
	}
	return fmt.Sprintf("%.2f ± %.2f", iv.Mean, iv.Std)
}

func signedPm(iv analysis.Interval) string {
	switch {
	case iv.N == 0:
		return "–"
	case iv.N == 1:
		return signedNum(iv.Mean)
	}
	return fmt.Sprintf("%s ± %.2f", signedNum(iv.Mean), iv.Std)
}

// interval is "lower to upper" ("–" below two values).
func interval(iv analysis.Interval) string {
	if iv.N < 2 {
		return "–"
	}
	return fmt.Sprintf("%s to %s", num(iv.Lower, 2), num(iv.Upper, 2))
}

func signedNum(x float64) string {
	if x > 0 {
		return "+" + num(x, 2)
	}
	return num(x, 2)
}

func seedGreedy(r *RunResult) string {
	if r == nil {
		return "–"
	}
	s := num(r.FinalGreedy, 2)
	if r.Passed {
		s += " ✓"
	}
	return s
}

func seedLength(r *RunResult) string {
	if r == nil {
		return "–"
	}
	return strconv.Itoa(r.Level)
}
