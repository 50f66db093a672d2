package evaluation

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sparsepcl/sparsepcl/agent/atomicfile"
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/internal/lab/sweep"
)

// EvalSweep is one sweep of issue 48's evaluation (docs/results/figure1-levers/PROTOCOL.md): the
// chosen cells of one lever set and budget.
type EvalSweep struct {
	// Name names the sweep's directory: eval-<set>-<iters> at the chosen sizes, small-<set> at the
	// smaller sizes.
	Name  string
	Set   LeverSet
	Iters int
	Cells []sweep.Cell // as the flags plan them
	// Flags are the cells and the budget as pcl sweep plan flags (--envs, --actions, --algos, the
	// weights, --iters); the seeds, the lever set's flags and those all runs share are not in them.
	Flags string
}

// EvalSweeps groups the choices by lever set and budget into one sweep each, at the choices' own
// sizes, in the order of LeverSets and then of the budget.
func EvalSweeps(choices []ConfigChoice) ([]EvalSweep, error) {
	type group struct {
		set   LeverSet
		iters int
	}
	cells := map[group][]sweep.Cell{}
	for _, c := range choices {
		k := group{c.Set, c.Iters}
		cells[k] = append(cells[k], sweep.Cell{Env: c.Env, Base: c.Base, Algo: c.Algo, Alpha: c.Alpha, Q: c.Q})
	}
	var out []EvalSweep
	for _, set := range LeverSets() {
		for _, iters := range []int{EvalIters, EvalItersRising} {
			cs := cells[group{set, iters}]
			if len(cs) == 0 {
				continue
			}
			s, err := evalSweep(fmt.Sprintf("eval-%s-%d", set, iters), set, iters, cs)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
	}
	if n := countCells(out); n != len(choices) {
		return nil, fmt.Errorf("sweep: %d of %d choices fall in no evaluation sweep (a lever set or budget outside the protocol's)", len(choices)-n, len(choices))
	}
	return out, nil
}

// SmallSweeps are the sweeps of Figure 1's smaller sizes (Figure1): one per lever set, each task
// and algorithm with the lever set and weight chosen at the task's largest size, at SmallIters.
// Choices at other sizes are left out.
func SmallSweeps(choices []ConfigChoice) ([]EvalSweep, error) {
	cells := map[LeverSet][]sweep.Cell{}
	for _, c := range choices {
		for _, t := range sweep.Figure1() {
			if t.Env != c.Env {
				continue
			}
			largest := slices.Max(t.Actions)
			if a, err := sweep.NumActions(c.Env, c.Base); err != nil || a != largest {
				continue
			}
			for _, a := range t.Actions {
				if a == largest {
					continue
				}
				b, err := sweep.BaseFor(c.Env, a)
				if err != nil {
					return nil, err
				}
				cells[c.Set] = append(cells[c.Set], sweep.Cell{Env: c.Env, Base: b, Algo: c.Algo, Alpha: c.Alpha, Q: c.Q})
			}
		}
	}
	var out []EvalSweep
	for _, set := range LeverSets() {
		if len(cells[set]) == 0 {
			continue
		}
		s, err := evalSweep("small-"+string(set), set, SmallIters, cells[set])
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func countCells(sweeps []EvalSweep) int {
	n := 0
	for _, s := range sweeps {
		n += len(s.Cells)
	}
	return n
}

// evalSweep writes cells as plan flags and checks that the flags plan them, no more and no less.
func evalSweep(name string, set LeverSet, iters int, cells []sweep.Cell) (EvalSweep, error) {
	flags, err := cellFlags(cells)
	if err != nil {
		return EvalSweep{}, fmt.Errorf("sweep %s: %w", name, err)
	}
	var g sweep.Grid
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	g.RegisterFlags(fs)
	if err := fs.Parse(flags); err != nil {
		return EvalSweep{}, fmt.Errorf("sweep %s: the plan flags %q: %w", name, flags, err)
	}
	planned, err := g.Cells()
	if err != nil {
		return EvalSweep{}, fmt.Errorf("sweep %s: the plan flags %q: %w", name, flags, err)
	}
	if !sameCells(planned, cells) {
		return EvalSweep{}, fmt.Errorf("sweep %s: the cells %v are not one grid (the flags %q plan %v)", name, cells, flags, planned)
	}
	return EvalSweep{Name: name, Set: set, Iters: iters, Cells: planned, Flags: strings.Join(append(flags, "--iters", strconv.Itoa(iters)), " ")}, nil
}

// sameCells reports whether a and b hold the same cells, in any order.
func sameCells(a, b []sweep.Cell) bool {
	key := func(cs []sweep.Cell) []string {
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = fmt.Sprintf("%+v", c)
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(key(a), key(b))
}

// cellFlags are the Grid flags of cells: each task with its own sizes, algorithms (for every task
// when all tasks run the same) and weights. Cells of a grid's cross product come back as they are;
// others (two weights of one task and algorithm at different sizes) do not, which evalSweep checks.
func cellFlags(cells []sweep.Cell) ([]string, error) {
	var envs []string
	actions := map[string][]string{}
	algos := map[string][]string{}
	var algoOrder []config.Algo
	weights := map[config.Algo][]string{}
	var qs []string
	add := func(list []string, v string) []string {
		if slices.Contains(list, v) {
			return list
		}
		return append(list, v)
	}
	for _, c := range cells {
		if c.Control != "" || c.Iters != 0 {
			return nil, fmt.Errorf("cell %+v: a weight control or budget of its own is not planned by these flags", c)
		}
		a, err := sweep.NumActions(c.Env, c.Base)
		if err != nil {
			return nil, err
		}
		envs = add(envs, c.Env)
		actions[c.Env] = add(actions[c.Env], c.Env+":"+strconv.Itoa(a))
		algos[c.Env] = add(algos[c.Env], string(c.Algo))
		if !slices.Contains(algoOrder, c.Algo) {
			algoOrder = append(algoOrder, c.Algo)
		}
		weights[c.Algo] = add(weights[c.Algo], c.Env+":"+strconv.FormatFloat(c.Alpha, 'g', -1, 64))
		if c.Algo == config.AlgoTsallis {
			qs = add(qs, strconv.FormatFloat(c.Q, 'g', -1, 64))
		}
	}
	if len(envs) == 0 {
		return nil, fmt.Errorf("no cells")
	}
	var allActions, allAlgos []string
	uniform := true
	for _, env := range envs {
		allActions = append(allActions, actions[env]...)
		uniform = uniform && slices.Equal(algos[env], algos[envs[0]])
		for _, a := range algos[env] {
			allAlgos = append(allAlgos, env+":"+a)
		}
	}
	if uniform {
		allAlgos = algos[envs[0]]
	}
	flags := []string{"--envs", strings.Join(envs, ","), "--actions", strings.Join(allActions, ","), "--algos", strings.Join(allAlgos, ",")}
	for _, a := range algoOrder {
		flags = append(flags, fmt.Sprintf("--%s-alphas", a), strings.Join(weights[a], ","))
	}
	if len(qs) > 0 {
		flags = append(flags, "--tsallis-qs", strings.Join(qs, ","))
	}
	return flags, nil
}

// CreditDir is the sweep directory of one lever set of the credit step.
type CreditDir struct {
	Set LeverSet
	Dir string
}

// ParseCreditDirs reads set=dir arguments, one per lever set at most ("both=runs/credit-both").
func ParseCreditDirs(args []string) ([]CreditDir, error) {
	var out []CreditDir
	for _, a := range args {
		set, dir, ok := strings.Cut(a, "=")
		if _, known := LeverSet(set).Levers(); !ok || dir == "" || !known {
			return nil, fmt.Errorf("sweep: %q is not set=dir with a lever set of %v", a, LeverSets())
		}
		if slices.ContainsFunc(out, func(d CreditDir) bool { return d.Set == LeverSet(set) }) {
			return nil, fmt.Errorf("sweep: lever set %s given twice", set)
		}
		out = append(out, CreditDir{Set: LeverSet(set), Dir: dir})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("sweep: give the credit sweeps as set=dir, one per lever set of %v", LeverSets())
	}
	return out, nil
}

// GatherCredit reads the credit sweeps into their arms, in the order given.
func GatherCredit(dirs []CreditDir) ([]CreditArm, error) {
	arms := make([]CreditArm, len(dirs))
	for i, d := range dirs {
		_, results, err := Gather(d.Dir)
		if err != nil {
			return nil, fmt.Errorf("lever set %s: %w", d.Set, err)
		}
		arms[i] = CreditArm{Set: d.Set, Groups: Groups(results)}
	}
	return arms, nil
}

// Choices is what WriteChoices found: the choices, the cells that wait, and, once none waits, the
// sweeps that evaluate the choices.
type Choices struct {
	Chosen      []ConfigChoice
	Waiting     []Waiting
	Eval, Small []EvalSweep
}

// WriteChoices chooses each task size's and algorithm's configuration from the credit sweeps
// (ChooseConfigs) and writes out/report.md: the lever sets side by side, the choices with their
// reasons and budgets, the cells not chosen yet, and, when every cell is chosen, the evaluation
// sweeps (EvalSweeps, SmallSweeps) with their plan flags, one table row each.
func WriteChoices(out string, arms []CreditArm) (Choices, error) {
	var ch Choices
	ch.Chosen, ch.Waiting = ChooseConfigs(arms)
	if len(ch.Waiting) == 0 && len(ch.Chosen) > 0 {
		var err error
		if ch.Eval, err = EvalSweeps(ch.Chosen); err != nil {
			return ch, err
		}
		if ch.Small, err = SmallSweeps(ch.Chosen); err != nil {
			return ch, err
		}
	}
	var b strings.Builder
	b.WriteString("# The chosen configurations (issue 48, step 3)\n\n" +
		"Per task size and algorithm, the lever set whose credit runs pass by the steady rule on the most selection seeds, " +
		"ties broken by fewer levers, then by the higher mean last-10% greedy reward (that first when no lever set passes: addendum 3), at the weight its runs used; " +
		fmt.Sprintf("the size's evaluation budget is %d iterations when a chosen configuration there was still rising on two of three seeds at the end of its credit runs, %d otherwise ", EvalItersRising, EvalIters) +
		"(docs/results/figure1-levers/PROTOCOL.md, steps 3 and 4, addendum 2: still rising is a last-10% greedy mean " +
		fmt.Sprintf("at least %d%% of the threshold above the mean over the 10%% before).\n\n", RisingPercent))
	writeLeverTable(&b, arms)
	if len(ch.Chosen) > 0 {
		b.WriteString("\n## Chosen\n\n\"passed\" counts the chosen lever set's runs that pass by the steady rule, \"greedy\" is their mean last-10% greedy reward, " +
			"\"rising\" counts those still rising at the end.\n\n")
		b.WriteString("| task | \\|A\\| | algo | levers | weight | passed | greedy | rising | iterations | why | budget |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, c := range ch.Chosen {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %g | %d/%d | %s | %d/%d | %d | %s | %s |\n", strings.TrimSuffix(c.Env, "-v0"), actionsLabel(c.Env, c.Base), algoLabel(c.Algo, c.Q),
				c.Set, c.Alpha, c.Passed, c.Seeds, num(c.Greedy, 2), c.Rising, c.Seeds, c.Iters, c.Why, c.Budget)
		}
	}
	if len(ch.Waiting) > 0 {
		fmt.Fprintf(&b, "\n## Not chosen yet (%d)\n\nThe evaluation sweeps are listed once every configuration is chosen.\n\n", len(ch.Waiting))
		for _, w := range ch.Waiting {
			fmt.Fprintf(&b, "- %s %s %s: %s\n", strings.TrimSuffix(w.Env, "-v0"), actionsLabel(w.Env, w.Base), algoLabel(w.Algo, w.Q), w.Why)
		}
	}
	if sweeps := append(slices.Clip(ch.Eval), ch.Small...); len(sweeps) > 0 {
		b.WriteString("\n## The evaluation sweeps\n\n" +
			"One sweep per lever set and budget: eval-* at the chosen sizes (evaluation seeds 1-5), small-* at Figure 1's smaller sizes of each task " +
			fmt.Sprintf("with the lever set and weight chosen at its largest (seeds 1-3, %d iterations). ", SmallIters) +
			"Each is planned with these pcl sweep plan flags after those all the issue's runs share, the seeds and the lever set's (scripts/figure1-levers):\n\n")
		b.WriteString("| sweep | levers | iterations | sweep plan flags |\n|---|---|---|---|\n")
		for _, s := range sweeps {
			fmt.Fprintf(&b, "| %s | %s | %d | `%s` |\n", s.Name, s.Set, s.Iters, s.Flags)
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return ch, fmt.Errorf("sweep: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(out, ReportFile), []byte(b.String()), 0o644); err != nil {
		return ch, fmt.Errorf("sweep: %w", err)
	}
	return ch, nil
}

// writeLeverTable writes each cell's groups side by side, a column per lever set.
func writeLeverTable(b *strings.Builder, arms []CreditArm) {
	var keys []cellKey
	cell := map[cellKey][]string{}
	for i, a := range arms {
		for _, g := range a.Groups {
			if g.Control != "" {
				continue
			}
			k := keyOf(g)
			if cell[k] == nil {
				keys = append(keys, k)
				cell[k] = slices.Repeat([]string{"–"}, len(arms))
			}
			s := fmt.Sprintf("%d of %d runs finished", g.Finished, len(g.Runs))
			if len(g.Runs) > 0 && g.Finished == len(g.Runs) {
				s = fmt.Sprintf("%d/%d, %s, rising %d", g.Passed, g.Finished, num(g.GreedyMean, 2), g.Rising)
			}
			s = fmt.Sprintf("%s (w %g)", s, g.Alpha)
			if cell[k][i] != "–" {
				s = cell[k][i] + "; " + s
			}
			cell[k][i] = s
		}
	}
	if len(keys) == 0 {
		return
	}
	b.WriteString("## The lever sets\n\nPer lever set: steady passes over its finished runs, their mean last-10% greedy reward, the runs still rising at the end, and the weight.\n\n| task | \\|A\\| | algo |")
	for _, a := range arms {
		fmt.Fprintf(b, " %s |", a.Set)
	}
	b.WriteString("\n|---|---|---|" + strings.Repeat("---|", len(arms)) + "\n")
	for _, k := range keys {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", strings.TrimSuffix(k.env, "-v0"), actionsLabel(k.env, k.base), algoLabel(k.algo, k.q), strings.Join(cell[k], " | "))
	}
}

// actionsLabel is |A| of env at base, or "base b" for an env without one.
func actionsLabel(env string, base int) string {
	if n, err := sweep.NumActions(env, base); err == nil {
		return strconv.Itoa(n)
	}
	return fmt.Sprintf("base %d", base)
}

// algoLabel is the algorithm, with q for Tsallis PCL.
func algoLabel(a config.Algo, q float64) string {
	if a == config.AlgoTsallis {
		return fmt.Sprintf("%s (q %g)", a, q)
	}
	return string(a)
}
