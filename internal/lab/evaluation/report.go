package evaluation

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sparsepcl/sparsepcl/agent/atomicfile"
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/success"
	"github.com/sparsepcl/sparsepcl/internal/lab/analysis"
	"github.com/sparsepcl/sparsepcl/internal/lab/plot"
	"github.com/sparsepcl/sparsepcl/internal/lab/sweep"
)

// ReportFile is the report's name inside the output directory; figures go beside it, with all
// panels of a sweep together in GridFile (the sampled reward) and GreedyGridFile (the greedy
// evaluations, when the runs have them).
const (
	ReportFile     = "report.md"
	GridFile       = "grid.png"
	GreedyGridFile = "grid-greedy.png"
)

// RunResult is one run as the report sees it.
type RunResult struct {
	Run    sweep.Run
	Status sweep.Status
	Err    error // the run could not be read (or conflicts with the manifest)
	Rows   []runstore.Row
	// Final is the mean sampled reward over the last 10% of the budget (NaN unless finished);
	// FinalGreedy the mean greedy reward of the evaluations there (NaN: none). Under --explore the
	// sampled reward includes the random actions; the greedy one is the policy's alone.
	Final, FinalGreedy float64
	Level              int // curriculum length at the last row
	// Fraction is Final as a fraction of the maximum reward at Level (NaN for non-algorithmic envs).
	Fraction float64
	// Reach is the first row whose sampled reward reached the threshold; GreedyReach the first
	// whose greedy reward did.
	Reach, GreedyReach *runstore.Row
	// Passed is the steady pass rule (SteadyPass): a finished run whose mean greedy reward over the
	// last 10% of its budget is at or above the threshold, at the curriculum's top level.
	Passed bool
	// Rising is the budget rule's "still rising" (StillRising) of a finished run.
	Rising bool
}

// SteadyPass is the pass rule every report states by this name: the mean greedy reward over the
// last 10% of the budget (finalGreedy) at or above threshold, and, for an algorithmic task, the
// curriculum at its top level (level). One greedy evaluation that once reached the threshold, or a
// sampled reward that did, does not pass.
func SteadyPass(env string, base int, threshold, finalGreedy float64, level int) bool {
	if math.IsNaN(finalGreedy) || finalGreedy < threshold {
		return false
	}
	if t, ok, err := success.ForEnv(env, base); ok && err == nil {
		return level >= t.TopLevel()
	}
	return true
}

// RisingPercent is the margin of StillRising, in percent of the task's threshold.
const RisingPercent = 5

// StillRising is the budget rule's "still rising" (docs/results/figure1-levers/PROTOCOL.md,
// addendum 2): the mean greedy reward over the last 10% of a run's iterations exceeds the mean
// over the 10% before that by at least RisingPercent (5%) of the task's threshold (of its
// magnitude, for a negative one). rows are the run's metrics to its end. The last 10% is the
// steady rule's window: for rows ending at iteration n-1, iterations n - max(1, n/10) to n-1; the
// 10% before has the same width just below it. A window without a greedy evaluation does not rise.
func StillRising(rows []runstore.Row, threshold float64) bool {
	if len(rows) == 0 {
		return false
	}
	n := rows[len(rows)-1].Iteration + 1
	from, width := lastTenth(n)
	last, before := meanGreedy(rows, from, n), meanGreedy(rows, from-width, from)
	if math.IsNaN(last) || math.IsNaN(before) {
		return false
	}
	return last-before >= math.Abs(threshold)*RisingPercent/100
}

// lastTenth is the first iteration of the last 10% of a run of n iterations, and the window's
// width (at least one iteration).
func lastTenth(n int) (from, width int) {
	width = max(1, n/10)
	return n - width, width
}

// meanGreedy is the mean greedy reward of the evaluations in rows at iterations from to to-1
// (NaN: none).
func meanGreedy(rows []runstore.Row, from, to int) float64 {
	var greedy []float64
	for _, x := range rows {
		if x.Iteration >= from && x.Iteration < to && !math.IsNaN(x.GreedyReward) {
			greedy = append(greedy, x.GreedyReward)
		}
	}
	m, _ := analysis.MeanStd(greedy) // NaN without evaluations
	return m
}

// Group is the runs of one cell: the same config apart from the seed.
type Group struct {
	Env        string
	Base       int
	Actions    int
	Algo       config.Algo
	Alpha, Q   float64
	Control    string // WeightControl of the runs' config: "" when the weight is fixed
	Iters      int
	Threshold  float64
	Runs       []RunResult
	Finished   int
	FinalMean  float64 // over finished runs
	FinalStd   float64 // the sample standard deviation (n − 1; NaN below two runs)
	GreedyMean float64 // FinalGreedy over the finished runs that have it (NaN: none)
	GreedyStd  float64 // as FinalStd
	FracMean   float64
	// LevelMin and LevelMax bound the curriculum length the finished runs ended at.
	LevelMin, LevelMax int
	Solved             int // finished runs whose sampled reward reached the threshold
	// GreedySolved counts the finished runs whose greedy evaluation reached it: the policy itself,
	// which is what decides an exploring run (its sampled reward counts the random actions).
	GreedySolved int
	// Passed counts the finished runs that pass by the steady rule (SteadyPass), Rising those
	// still rising at the end (StillRising).
	Passed, Rising int
	MedianIt       float64 // median iteration to the threshold over the solved runs (NaN: none)
	MedianWall     float64
}

// Gather reads every run of the sweep in dir.
func Gather(dir string) (sweep.Manifest, []RunResult, error) {
	m, err := sweep.Load(dir)
	if err != nil {
		return sweep.Manifest{}, nil, err
	}
	out := make([]RunResult, len(m.Runs))
	for i, r := range m.Runs {
		out[i] = readRun(dir, r)
	}
	return m, out, nil
}

func readRun(dir string, r sweep.Run) RunResult {
	res := RunResult{Run: r, Final: math.NaN(), FinalGreedy: math.NaN(), Fraction: math.NaN()}
	st, err := sweep.Inspect(dir, r)
	res.Status = st
	if err != nil {
		res.Err = err
		return res
	}
	if st.State == sweep.Missing {
		return res
	}
	rows, err := runstore.Dir(sweep.RunDir(dir, r)).Metrics()
	if err != nil {
		// A run that is still going may be caught mid-line; only a finished run's metrics must read.
		if st.State == sweep.Finished {
			res.Err = err
		}
		return res
	}
	// Rows past the checkpoint are dropped on resume; the report reads what the checkpoint holds.
	res.Rows = slices.DeleteFunc(rows, func(x runstore.Row) bool { return st.State != sweep.Started && x.Iteration >= st.Iteration })
	c := r.Config
	if n := len(res.Rows); n > 0 {
		res.Level = res.Rows[n-1].Curriculum
	}
	for i := range res.Rows {
		x := res.Rows[i]
		if res.Reach == nil && x.MeanReward >= c.RewardThreshold {
			res.Reach = &res.Rows[i]
		}
		if res.GreedyReach == nil && !math.IsNaN(x.GreedyReward) && x.GreedyReward >= c.RewardThreshold {
			res.GreedyReach = &res.Rows[i]
		}
	}
	if st.State == sweep.Finished && len(res.Rows) > 0 {
		n := res.Rows[len(res.Rows)-1].Iteration + 1
		from, _ := lastTenth(n)
		s, k := 0.0, 0
		for _, x := range res.Rows {
			if x.Iteration >= from {
				s += x.MeanReward
				k++
			}
		}
		res.Final = s / float64(k)
		res.FinalGreedy = meanGreedy(res.Rows, from, n)
		if t, ok, err := success.ForEnv(c.Env, c.Base); ok && err == nil {
			res.Fraction = t.Fraction(res.Final, max(res.Level, t.Task.StartMinLength()))
		}
		res.Passed = SteadyPass(c.Env, c.Base, c.RewardThreshold, res.FinalGreedy, res.Level)
		res.Rising = StillRising(res.Rows, c.RewardThreshold)
	}
	return res
}

// Groups gathers runs into cells, in manifest order.
func Groups(results []RunResult) []*Group {
	var out []*Group
	byKey := map[string]*Group{}
	for _, r := range results {
		c := r.Run.Config
		q := 0.0
		if c.Algo == config.AlgoTsallis {
			q = c.TsallisQ
		}
		ctl := c.WeightControl()
		key := fmt.Sprintf("%s|%d|%s|%g|%g|%s|%d", c.Env, c.Base, c.Algo, c.Alpha, q, ctl, c.Iters)
		g := byKey[key]
		if g == nil {
			a, _ := sweep.NumActions(c.Env, c.Base)
			g = &Group{Env: c.Env, Base: c.Base, Actions: a, Algo: c.Algo, Alpha: c.Alpha, Q: q, Control: ctl, Iters: c.Iters, Threshold: c.RewardThreshold}
			byKey[key] = g
			out = append(out, g)
		}
		g.Runs = append(g.Runs, r)
	}
	for _, g := range out {
		var finals, greedy, fracs, its, walls []float64
		for _, r := range g.Runs {
			if r.Status.State != sweep.Finished || r.Err != nil {
				continue
			}
			if g.Finished == 0 || r.Level < g.LevelMin {
				g.LevelMin = r.Level
			}
			g.LevelMax = max(g.LevelMax, r.Level)
			g.Finished++
			finals = append(finals, r.Final)
			if !math.IsNaN(r.FinalGreedy) {
				greedy = append(greedy, r.FinalGreedy)
			}
			if !math.IsNaN(r.Fraction) {
				fracs = append(fracs, r.Fraction)
			}
			if r.GreedyReach != nil {
				g.GreedySolved++
			}
			if r.Passed {
				g.Passed++
			}
			if r.Rising {
				g.Rising++
			}
			if r.Reach != nil {
				g.Solved++
				its = append(its, float64(r.Reach.Iteration))
				walls = append(walls, r.Reach.WallSeconds)
			}
		}
		fin, gr := analysis.SampleInterval(finals), analysis.SampleInterval(greedy)
		g.FinalMean, g.FinalStd = fin.Mean, fin.Std
		g.GreedyMean, g.GreedyStd = gr.Mean, gr.Std
		g.FracMean, _ = analysis.MeanStd(fracs)
		g.MedianIt, g.MedianWall = analysis.Median(its), analysis.Median(walls)
	}
	return out
}

// Report gathers the sweep in dir and writes report.md and one reward figure per (task, size)
// into out. Runs that have not finished are listed with their state and the command that
// continues them; the table counts finished runs only.
func Report(dir, out string) ([]*Group, error) {
	m, results, err := Gather(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	groups := Groups(results)
	name := m.Name
	if name == "" {
		name = filepath.Base(dir)
	}
	figs, err := figures(out, name, groups)
	if err != nil {
		return groups, err
	}
	var b strings.Builder
	finished := 0
	for _, r := range results {
		if r.Status.State == sweep.Finished && r.Err == nil {
			finished++
		}
	}
	fmt.Fprintf(&b, "# Sweep %s\n\n%d of %d runs finished.\n\n", name, finished, len(results))
	writeGroupTable(&b, groups)
	if len(figs) > 0 {
		b.WriteString("\n## Figures\n\nMean sampled episode reward over the seeds, with the min-max band; one line per algorithm and weight. " +
			"The -greedy figures show the greedy evaluations the same way.\n\n")
		for _, f := range figs {
			fmt.Fprintf(&b, "![%s](%s)\n", strings.TrimSuffix(f, ".png"), f)
		}
	}
	writeChosenWeights(&b, groups)
	writeSteadyChoices(&b, groups)
	writeNotFinished(&b, dir, results)
	if err := atomicfile.WriteFile(filepath.Join(out, ReportFile), []byte(b.String()), 0o644); err != nil {
		return groups, fmt.Errorf("sweep: %w", err)
	}
	return groups, nil
}

// writeGroupTable writes the report's main table, one row per task, size, algorithm and weight.
func writeGroupTable(b *strings.Builder, groups []*Group) {
	b.WriteString("\"final\" is the mean sampled episode reward over the last 10% of each run's budget, mean ± sample standard deviation (n − 1) over the finished seeds; " +
		"\"greedy\" the same over the greedy evaluations in that stretch; " +
		"\"of max\" is \"final\" as a fraction of the largest reward possible at the curriculum level the run ended at, and \"length\" that level (the curriculum's minimum input length; min-max over the seeds); " +
		"\"passed\" counts the finished seeds that pass by the steady rule: a mean greedy reward over the last 10% of the budget at or above the threshold, at the curriculum's top level; " +
		"\"solved\" counts those whose mean sampled reward ever reached the threshold, with the median iteration and wall time at which it did, and \"greedy solved\" those whose greedy evaluation ever did (the policy alone: a run with --explore samples random actions too). " +
		"★ marks the best weight of each task, size and algorithm by final reward, among two or more with finished runs; " +
		"a weight that moves over the run says how (auto: learned from the weight; from w0: the schedule from w0 down to the weight).\n\n")
	b.WriteString("| task | \\|A\\| | algo | weight | iters | finished | final | greedy | of max | length | threshold | passed | solved | iterations (wall s) to threshold | greedy solved |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	best := bestWeights(groups)
	for _, g := range groups {
		w := strconv.FormatFloat(g.Alpha, 'g', -1, 64)
		if g.Algo == config.AlgoTsallis {
			w += fmt.Sprintf(" (q %g)", g.Q)
		}
		if g.Control != "" {
			w += ", " + g.Control
		}
		if best[g] {
			w += " ★"
		}
		reach := "–"
		if g.Solved > 0 {
			reach = fmt.Sprintf("%.0f (%.0f)", g.MedianIt, g.MedianWall)
		}
		length := "–"
		switch {
		case g.Finished == 0 || g.LevelMax == 0:
		case g.LevelMin == g.LevelMax:
			length = strconv.Itoa(g.LevelMax)
		default:
			length = fmt.Sprintf("%d-%d", g.LevelMin, g.LevelMax)
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s | %d | %d/%d | %s | %s | %s | %s | %g | %d/%d | %d/%d | %s | %d/%d |\n", strings.TrimSuffix(g.Env, "-v0"), g.Actions, g.Algo, w,
			g.Iters, g.Finished, len(g.Runs), pm(g.FinalMean, g.FinalStd), pm(g.GreedyMean, g.GreedyStd), num(g.FracMean, 2), length, g.Threshold, g.Passed, g.Finished, g.Solved, g.Finished, reach,
			g.GreedySolved, g.Finished)
	}
}

// writeSteadyChoices writes the weight chosen per task size and algorithm by the steady rule,
// when there are choices.
func writeSteadyChoices(b *strings.Builder, groups []*Group) {
	choices := ChooseSteady(groups)
	if len(choices) == 0 {
		return
	}
	b.WriteString("\n## Chosen by the steady rule\n\nPer task size and algorithm, the weight with the most runs that pass by the steady rule, ties broken by the mean last-10% greedy reward (docs/results/figure1-levers/PROTOCOL.md):\n\n")
	b.WriteString("| task | \\|A\\| | algo | weight | passed | greedy |\n|---|---|---|---|---|---|\n")
	for _, c := range choices {
		n, err := sweep.NumActions(c.Env, c.Base)
		actions := strconv.Itoa(n)
		if err != nil {
			actions = "-"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %g | %d/%d | %s |\n", strings.TrimSuffix(c.Env, "-v0"), actions, c.Algo, c.Alpha, c.Passed, c.Seeds, num(c.Greedy, 2))
	}
	fmt.Fprintf(b, "\nAs sweep plan flags: `%s`\n", SteadyWeightFlags(choices))
}

// writeChosenWeights writes the weight chosen per task and algorithm, when there are choices.
func writeChosenWeights(b *strings.Builder, groups []*Group) {
	choices := ChooseWeights(groups)
	if len(choices) == 0 {
		return
	}
	b.WriteString("\n## Chosen weights\n\nPer task and algorithm, the weight with the highest mean \"of max\" over the sizes where every weight has finished runs:\n\n")
	b.WriteString("| task | algo | weight | mean of max | sizes |\n|---|---|---|---|---|\n")
	for _, c := range choices {
		fmt.Fprintf(b, "| %s | %s | %g | %s | %d |\n", strings.TrimSuffix(c.Env, "-v0"), c.Algo, c.Alpha, num(c.Score, 2), c.Sizes)
	}
	fmt.Fprintf(b, "\nAs sweep plan flags: `%s`\n", WeightFlags(choices))
}

// writeNotFinished lists the sweep's runs that failed or have not finished, with the command
// that continues each.
func writeNotFinished(b *strings.Builder, dir string, results []RunResult) {
	var notDone []string
	for _, r := range results {
		switch {
		case r.Err != nil:
			notDone = append(notDone, fmt.Sprintf("- run %d %s: %v", r.Run.Index, r.Run.ID, r.Err))
		case r.Status.State != sweep.Finished:
			what := "missing: never started"
			switch r.Status.State {
			case sweep.Started:
				what = "started, no checkpoint yet"
			case sweep.Partial:
				what = fmt.Sprintf("partial: %d of %d iterations", r.Status.Iteration, r.Run.Config.Iters)
			}
			notDone = append(notDone, fmt.Sprintf("- run %d %s: %s (`pcl sweep run --dir %s --index %d`)", r.Run.Index, r.Run.ID, what, dir, r.Run.Index))
		}
	}
	if len(notDone) > 0 {
		fmt.Fprintf(b, "\n## Not finished (%d)\n\n%s\n", len(notDone), strings.Join(notDone, "\n"))
	}
}

// Count is the number of finished runs in groups, and of all runs.
func Count(groups []*Group) (finished, all int) {
	for _, g := range groups {
		finished += g.Finished
		all += len(g.Runs)
	}
	return finished, all
}

func bestWeights(groups []*Group) map[*Group]bool {
	best := map[string]*Group{}
	for _, g := range groups {
		if g.Finished == 0 || math.IsNaN(g.FinalMean) {
			continue
		}
		k := fmt.Sprintf("%s|%d|%s|%g", g.Env, g.Base, g.Algo, g.Q)
		if b := best[k]; b == nil || g.FinalMean > b.FinalMean {
			best[k] = g
		}
	}
	out := map[*Group]bool{}
	n := map[string]int{}
	for _, g := range groups {
		if g.Finished > 0 && !math.IsNaN(g.FinalMean) {
			n[fmt.Sprintf("%s|%d|%s|%g", g.Env, g.Base, g.Algo, g.Q)]++
		}
	}
	for k, g := range best {
		if n[k] > 1 {
			out[g] = true
		}
	}
	return out
}

// pm is "mean ± std", the mean alone when std is NaN (one value), "–" without a mean.
func pm(m, s float64) string {
	switch {
	case math.IsNaN(m):
		return "–"
	case math.IsNaN(s):
		return strconv.FormatFloat(m, 'f', 2, 64)
	}
	return fmt.Sprintf("%.2f ± %.2f", m, s)
}

func num(x float64, prec int) string {
	if math.IsNaN(x) {
		return "–"
	}
	return strconv.FormatFloat(x, 'f', prec, 64)
}

// figures draws one reward figure per (task, size): a band per group over its finished runs, so
// that the figures show what the table counts.
func figures(out, name string, groups []*Group) ([]string, error) {
	var files []string
	var grid, greedyGrid [][]plot.Panel // a row per task, in the order the tasks first appear
	greedyPanels := 0
	row := map[string]int{}
	minSeeds, maxSeeds := math.MaxInt, 0
	for _, p := range figurePanels(groups) {
		bands, greedy, algos, seeds := p.bands()
		if len(bands) == 0 {
			continue
		}
		lo, hi := slices.Min(seeds), slices.Max(seeds)
		minSeeds, maxSeeds = min(minSeeds, lo), max(maxSeeds, hi)
		drawnFiles, err := p.draw(out, bands, greedy, algos, lo, hi)
		files = append(files, drawnFiles...)
		if err != nil {
			return files, err
		}
		i, ok := row[p.env]
		if !ok {
			i, row[p.env] = len(grid), len(grid)
			grid, greedyGrid = append(grid, nil), append(greedyGrid, nil)
		}
		panelTitle := fmt.Sprintf("%s %s", strings.TrimSuffix(p.env, "-v0"), plot.SizeLabel(p.actions, p.groups[0].Base, 0))
		grid[i] = append(grid[i], plot.Panel{Title: panelTitle, Bands: bands})
		// The greedy grid keeps the sampled grid's layout; a panel without evaluations stays empty.
		greedyGrid[i] = append(greedyGrid[i], plot.Panel{Title: panelTitle, Bands: greedy})
		if len(greedy) > 0 {
			greedyPanels++
		}
	}
	drawn := 0
	for _, r := range grid {
		drawn += len(r)
	}
	if drawn <= 1 { // one cell's figure is the whole sweep: no grid
		return files, nil
	}
	seeds := plot.SeedsLabel(minSeeds, maxSeeds)
	var grids []string
	for _, g := range []struct {
		file, what string
		panels     [][]plot.Panel
		draw       bool
	}{
		{GridFile, "mean sampled episode reward", grid, true},
		{GreedyGridFile, "mean greedy evaluation reward", greedyGrid, greedyPanels > 0},
	} {
		if !g.draw {
			continue
		}
		panels := g.panels
		if len(panels) == drawn { // one size per task: the panels side by side, not stacked
			var one []plot.Panel
			for _, r := range panels {
				one = append(one, r...)
			}
			panels = [][]plot.Panel{one}
		}
		title := fmt.Sprintf("%s\n%s, %s", name, g.what, seeds)
		if err := plot.Grid(filepath.Join(out, g.file), title, "iteration", "reward", panels); err != nil {
			return append(grids, files...), err
		}
		grids = append(grids, g.file)
	}
	return append(grids, files...), nil
}

// figurePanel is one task at one size: the groups drawn in one figure.
type figurePanel struct {
	env     string
	actions int
	groups  []*Group
}

// figurePanels groups the groups by task and size, in the order they first appear.
func figurePanels(groups []*Group) []*figurePanel {
	var panels []*figurePanel
	idx := map[string]*figurePanel{}
	for _, g := range groups {
		k := fmt.Sprintf("%s|%d", g.Env, g.Actions)
		p := idx[k]
		if p == nil {
			p = &figurePanel{env: g.Env, actions: g.Actions}
			idx[k] = p
			panels = append(panels, p)
		}
		p.groups = append(p.groups, g)
	}
	return panels
}

// bands are the panel's sampled-reward bands (one per group with finished seeds), their greedy
// counterparts, the groups' algorithms and seed counts. A band whose seed count differs from
// another's names its own.
func (p *figurePanel) bands() (bands, greedy []plot.Band, algos []config.Algo, seeds []int) {
	colours := analysis.Palette{}
	for _, g := range p.groups {
		band, n := bandOf(g, sampledReward)
		if n == 0 {
			continue
		}
		band.Colour = colours.Next(g.Algo)
		band.Name = plot.AlgoLabel(g.Algo, g.Alpha, g.Q)
		if g.Control != "" {
			band.Name += ", " + g.Control
		}
		bands, algos, seeds = append(bands, band), append(algos, g.Algo), append(seeds, n)
		if gb, _ := bandOf(g, greedyReward); len(gb.X) > 0 {
			gb.Colour, gb.Name = band.Colour, band.Name
			greedy = append(greedy, gb)
		}
	}
	if len(seeds) > 0 && slices.Min(seeds) != slices.Max(seeds) {
		for i, n := range seeds {
			unit := "seeds"
			if n == 1 {
				unit = "seed"
			}
			bands[i].Name += fmt.Sprintf(" (%d %s)", n, unit)
		}
	}
	return bands, greedy, algos, seeds
}

// draw writes the panel's figure and, when there are greedy evaluations, its -greedy figure;
// the title gives the seed count (lo-hi) the bands share.
func (p *figurePanel) draw(out string, bands, greedy []plot.Band, algos []config.Algo, lo, hi int) ([]string, error) {
	f := fmt.Sprintf("%s-A%d.png", strings.TrimSuffix(p.env, "-v0"), p.actions)
	title := fmt.Sprintf("%s %s: %s\n%s", p.env, plot.SizeLabel(p.actions, p.groups[0].Base, 0), plot.AlgosLabel(algos), plot.SeedsLabel(lo, hi))
	if err := plot.Bands(filepath.Join(out, f), title, "iteration", "mean sampled episode reward", bands); err != nil {
		return nil, err
	}
	files := []string{f}
	if len(greedy) > 0 {
		// The policy alone: an exploring run's sampled reward counts its random actions.
		gf := strings.TrimSuffix(f, ".png") + "-greedy.png"
		if err := plot.Bands(filepath.Join(out, gf), title, "iteration", "mean greedy evaluation reward", greedy); err != nil {
			return files, err
		}
		files = append(files, gf)
	}
	return files, nil
}

func sampledReward(x runstore.Row) float64 { return x.MeanReward }

// greedyReward is NaN in the rows without an evaluation, which the band skips.
func greedyReward(x runstore.Row) float64 { return x.GreedyReward }

// bandOf is the band of value (sampledReward or greedyReward) per iteration over g's finished
// runs, and their count. A run still under way is left out: its curve would end early and pull
// the band's tail toward a single seed.
func bandOf(g *Group, value func(runstore.Row) float64) (plot.Band, int) {
	var seeds [][]analysis.Point
	for _, r := range g.Runs {
		if r.Status.State != sweep.Finished || len(r.Rows) == 0 || r.Err != nil {
			continue
		}
		pts := make([]analysis.Point, len(r.Rows))
		for i, x := range r.Rows {
			pts[i] = analysis.Point{It: x.Iteration, X: float64(x.Iteration), V: value(x)}
		}
		seeds = append(seeds, pts)
	}
	return analysis.SeedBand(seeds, 1), len(seeds)
}
