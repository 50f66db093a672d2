package evaluation

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sparsepcl/sparsepcl/agent/config"
)

// Choice is the weight chosen for one task and algorithm (and q) from a weight search.
type Choice struct {
	Env   string
	Algo  config.Algo
	Q     float64
	Alpha float64
	// Score is the chosen weight's fraction of the maximum reward ("of max"), averaged over the
	// sizes where every candidate weight has finished runs; Sizes counts those sizes.
	Score float64
	Sizes int
}

// ChooseWeights picks, for each task and algorithm, the weight whose runs reach the highest
// fraction of the maximum reward on average over the task's sizes. Only sizes where every
// candidate weight has a finished run count, so that no weight wins by missing a hard size.
// Cells of one weight only are not a choice and are left out.
func ChooseWeights(groups []*Group) []Choice {
	type key struct {
		env  string
		algo config.Algo
		q    float64
	}
	type size struct {
		key
		base int
	}
	frac := map[size]map[float64]float64{} // size -> weight -> fraction
	weights := map[key][]float64{}
	var keys []key
	for _, g := range groups {
		if g.Control != "" {
			continue // a choice is a fixed weight (it is given back as --sparse-alphas and the like)
		}
		k := key{g.Env, g.Algo, g.Q}
		if _, ok := weights[k]; !ok {
			keys = append(keys, k)
		}
		if !slices.Contains(weights[k], g.Alpha) {
			weights[k] = append(weights[k], g.Alpha)
		}
		if g.Finished == 0 || math.IsNaN(g.FracMean) {
			continue
		}
		s := size{k, g.Base}
		if frac[s] == nil {
			frac[s] = map[float64]float64{}
		}
		frac[s][g.Alpha] = g.FracMean
	}
	var out []Choice
	for _, k := range keys {
		ws := weights[k]
		if len(ws) < 2 {
			continue
		}
		sum, n := map[float64]float64{}, 0
		for s, byW := range frac {
			if s.key != k || len(byW) != len(ws) {
				continue
			}
			n++
			for w, f := range byW {
				sum[w] += f
			}
		}
		if n == 0 {
			continue
		}
		best := Choice{Env: k.env, Algo: k.algo, Q: k.q, Score: math.Inf(-1), Sizes: n}
		for _, w := range ws { // in the order given, so a tie keeps the first weight
			if m := sum[w] / float64(n); m > best.Score {
				best.Alpha, best.Score = w, m
			}
		}
		out = append(out, best)
	}
	return out
}

// WeightFlags turns choices into the sweep plan flags that run them, e.g.
// "--sparse-alphas Copy-v0:0.01,Reverse-v0:0.05 --soft-alphas Copy-v0:0.025".
func WeightFlags(choices []Choice) string {
	byAlgo := map[config.Algo][]string{}
	var algos []config.Algo
	for _, c := range choices {
		if _, ok := byAlgo[c.Algo]; !ok {
			algos = append(algos, c.Algo)
		}
		byAlgo[c.Algo] = append(byAlgo[c.Algo], c.Env+":"+strconv.FormatFloat(c.Alpha, 'g', -1, 64))
	}
	var parts []string
	for _, a := range algos {
		parts = append(parts, fmt.Sprintf("--%s-alphas %s", a, strings.Join(slices.Compact(byAlgo[a]), ",")))
	}
	return strings.Join(parts, " ")
}

// SteadyChoice is the weight the steady rule picks for one task size and algorithm (and q).
type SteadyChoice struct {
	Env    string
	Base   int
	Algo   config.Algo
	Q      float64
	Alpha  float64
	Passed int     // the chosen weight's runs that pass by the steady rule (SteadyPass)
	Seeds  int     // its finished runs
	Greedy float64 // their mean last-10% greedy reward
}

// ChooseSteady picks, for each task size and algorithm, the weight with the most runs that pass
// by the steady rule, ties broken by the higher mean last-10% greedy reward, then by the order
// the weights were given (docs/results/figure1-levers/PROTOCOL.md, step 2). A cell is chosen only
// when each of its two or more weights has every run finished: no weight wins by missing runs.
func ChooseSteady(groups []*Group) []SteadyChoice {
	type key struct {
		env  string
		base int
		algo config.Algo
		q    float64
	}
	byKey := map[key][]*Group{}
	var keys []key
	for _, g := range groups {
		if g.Control != "" {
			continue
		}
		k := key{g.Env, g.Base, g.Algo, g.Q}
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], g)
	}
	var out []SteadyChoice
	for _, k := range keys {
		gs := byKey[k]
		if len(gs) < 2 || slices.ContainsFunc(gs, func(g *Group) bool { return g.Finished == 0 || g.Finished < len(g.Runs) }) {
			continue
		}
		best := gs[0]
		for _, g := range gs[1:] {
			if g.Passed > best.Passed || (g.Passed == best.Passed && greedier(g.GreedyMean, best.GreedyMean)) {
				best = g
			}
		}
		out = append(out, SteadyChoice{Env: k.env, Base: k.base, Algo: k.algo, Q: k.q, Alpha: best.Alpha,
			Passed: best.Passed, Seeds: best.Finished, Greedy: best.GreedyMean})
	}
	return out
}

// greedier reports a > b, a NaN (no greedy evaluation) below every number.
func greedier(a, b float64) bool {
	if math.IsNaN(a) {
		return false
	}
	return math.IsNaN(b) || a > b
}

// SteadyWeightFlags turns steady choices into the sweep plan flags that run them, as WeightFlags.
func SteadyWeightFlags(choices []SteadyChoice) string {
	cs := make([]Choice, len(choices))
	for i, c := range choices {
		cs[i] = Choice{Env: c.Env, Algo: c.Algo, Q: c.Q, Alpha: c.Alpha}
	}
	return WeightFlags(cs)
}

// LeverSet is a lever set of the credit step (docs/results/figure1-levers/PROTOCOL.md, step 1):
// which of the two levers, the advantage-prioritised replay and exploring copies, its runs turn on.
type LeverSet string

// The credit step's lever sets.
const (
	LeversNone      LeverSet = "none"
	LeversAdvantage LeverSet = "advantage"
	LeversExplore   LeverSet = "explore"
	LeversBoth      LeverSet = "both"
)

// LeverSets are the credit step's lever sets in the order its sweeps run: the order a full tie
// between two of them keeps.
func LeverSets() []LeverSet {
	return []LeverSet{LeversNone, LeversAdvantage, LeversExplore, LeversBoth}
}

// Levers is how many levers s turns on; ok is false for a name that is not a lever set.
func (s LeverSet) Levers() (n int, ok bool) {
	switch s {
	case LeversNone:
		return 0, true
	case LeversAdvantage, LeversExplore:
		return 1, true
	case LeversBoth:
		return 2, true
	}
	return 0, false
}

// The evaluation budgets (PROTOCOL.md step 4, addenda 1 and 2): EvalIters at the largest sizes,
// EvalItersRising at a size where a chosen configuration was still rising, SmallIters at the
// smaller sizes.
const (
	EvalIters       = 2000
	EvalItersRising = 4000
	SmallIters      = 1000
)

// CreditArm is one lever set's sweep of the credit step, as its groups (Groups).
type CreditArm struct {
	Set    LeverSet
	Groups []*Group
}

// ConfigChoice is the configuration step 3 chooses for one task size and algorithm (and q): a
// lever set at the weight its credit runs used, and the size's evaluation budget (step 4).
type ConfigChoice struct {
	Env   string
	Base  int
	Algo  config.Algo
	Q     float64
	Set   LeverSet
	Alpha float64
	// Passed, Seeds, Greedy and Rising are the chosen set's: its runs that pass by the steady rule
	// (SteadyPass), its finished runs, their mean last-10% greedy reward, and its runs still rising
	// at the end (StillRising).
	Passed, Seeds int
	Greedy        float64
	Rising        int
	// Iters is the size's evaluation budget, shared by its algorithms: EvalItersRising when the
	// chosen configuration of any of them rose on two thirds of its seeds (RisingOnMost),
	// EvalIters otherwise.
	Iters int
	// Why says what decided the lever set against the runner-up, Budget what decided Iters.
	Why, Budget string
}

// RisingOnMost is the budget rule's count (PROTOCOL.md step 4): rising on two of three seeds, or
// two thirds of any other count, and at least one.
func RisingOnMost(rising, seeds int) bool { return rising > 0 && 3*rising >= 2*seeds }

// Waiting is a task size and algorithm without a configuration yet, and why.
type Waiting struct {
	Env  string
	Base int
	Algo config.Algo
	Q    float64
	Why  string
}

// cellKey is a task size and algorithm (and q): a cell of the credit step, whatever the weight.
type cellKey struct {
	env  string
	base int
	algo config.Algo
	q    float64
}

func keyOf(g *Group) cellKey { return cellKey{g.Env, g.Base, g.Algo, g.Q} }

// candidate is one lever set's group of a cell.
type candidate struct {
	set    LeverSet
	levers int
	g      *Group
}

// compareCandidates orders the better candidate first: more steady passes, then fewer levers,
// then the higher mean last-10% greedy reward (a NaN below every number); 0 for a full tie. When
// neither passes on any seed, the greedy mean comes before the levers (PROTOCOL.md addendum 3):
// fewer levers is the simpler of two configurations that pass alike, not of two that fail.
func compareCandidates(a, b candidate) int {
	byGreedy := func() int {
		switch {
		case greedier(a.g.GreedyMean, b.g.GreedyMean):
			return -1
		case greedier(b.g.GreedyMean, a.g.GreedyMean):
			return 1
		}
		return 0
	}
	switch {
	case a.g.Passed != b.g.Passed:
		return b.g.Passed - a.g.Passed
	case a.g.Passed == 0 && byGreedy() != 0:
		return byGreedy()
	case a.levers != b.levers:
		return a.levers - b.levers
	}
	return byGreedy()
}

// ChooseConfigs picks, for each task size and algorithm of the credit sweeps (arms), the lever set
// with the most runs that pass by the steady rule over the selection seeds, ties broken by fewer
// levers, then by the higher mean last-10% greedy reward (the greedy mean first when no set
// passes at all: addendum 3), then by the order of arms, at the weight its runs used (PROTOCOL.md
// step 3); and each size's evaluation budget (step 4), EvalItersRising
// when any algorithm's chosen configuration there is still rising (StillRising) on two thirds of
// its seeds, EvalIters otherwise. A cell waits, unchosen, while a lever set has no group of it, more
// than one (a weight or budget apart), or a run of it unfinished; the other algorithms at its size
// wait with it, for the budget. Groups of a moving weight (Control) are left out.
func ChooseConfigs(arms []CreditArm) ([]ConfigChoice, []Waiting) {
	keys, byArm := cellsOfArms(arms)
	chosen := map[cellKey]*ConfigChoice{}
	why := map[cellKey]string{}
	for _, k := range keys {
		chosen[k], why[k] = chooseCell(arms, byArm, k)
	}
	setBudgets(keys, chosen, why)
	var out []ConfigChoice
	var waiting []Waiting
	for _, k := range keys {
		if why[k] != "" {
			waiting = append(waiting, Waiting{Env: k.env, Base: k.base, Algo: k.algo, Q: k.q, Why: why[k]})
			continue
		}
		out = append(out, *chosen[k])
	}
	return out, waiting
}

// cellsOfArms is the cells of the credit sweeps in their first arm's order, and each arm's groups
// of each cell; groups of a moving weight (Control) are left out.
func cellsOfArms(arms []CreditArm) ([]cellKey, []map[cellKey][]*Group) {
	var keys []cellKey
	seen := map[cellKey]bool{}
	byArm := make([]map[cellKey][]*Group, len(arms))
	for i, a := range arms {
		byArm[i] = map[cellKey][]*Group{}
		for _, g := range a.Groups {
			if g.Control != "" {
				continue
			}
			k := keyOf(g)
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
			byArm[i][k] = append(byArm[i][k], g)
		}
	}
	return keys, byArm
}

// chooseCell picks cell k's lever set among the arms (without its budget), or says why it waits.
func chooseCell(arms []CreditArm, byArm []map[cellKey][]*Group, k cellKey) (*ConfigChoice, string) {
	var cands []candidate
	for i, a := range arms {
		gs := byArm[i][k]
		levers, ok := a.Set.Levers()
		switch {
		case !ok:
			return nil, fmt.Sprintf("%q is not a lever set", a.Set)
		case len(gs) == 0:
			return nil, fmt.Sprintf("no runs in the %s sweep", a.Set)
		case len(gs) > 1:
			return nil, fmt.Sprintf("the %s sweep has %d weights or budgets of it, want one", a.Set, len(gs))
		case len(gs[0].Runs) == 0 || gs[0].Finished < len(gs[0].Runs):
			return nil, fmt.Sprintf("%d of %d runs of the %s sweep finished", gs[0].Finished, len(gs[0].Runs), a.Set)
		}
		cands = append(cands, candidate{a.Set, levers, gs[0]})
	}
	if len(cands) == 0 {
		return nil, ""
	}
	slices.SortStableFunc(cands, compareCandidates) // a full tie keeps the order of arms
	best := cands[0]
	return &ConfigChoice{Env: k.env, Base: k.base, Algo: k.algo, Q: k.q, Set: best.set, Alpha: best.g.Alpha,
		Passed: best.g.Passed, Seeds: best.g.Finished, Greedy: best.g.GreedyMean, Rising: best.g.Rising, Why: decided(cands)}, ""
}

// setBudgets gives each chosen cell its size's evaluation budget (PROTOCOL.md step 4), or makes it
// wait (why) while another algorithm at its size has no choice yet.
func setBudgets(keys []cellKey, chosen map[cellKey]*ConfigChoice, why map[cellKey]string) {
	sizeOf := func(k cellKey) cellKey { return cellKey{env: k.env, base: k.base} }
	for _, k := range keys {
		if chosen[k] == nil {
			continue
		}
		var counts []string
		rising := false
		for _, o := range keys {
			if sizeOf(o) != sizeOf(k) {
				continue
			}
			c := chosen[o]
			if c == nil {
				why[k] = fmt.Sprintf("the size's budget waits for %s: %s", o.algo, why[o])
				break
			}
			counts = append(counts, fmt.Sprintf("%s %d/%d", c.Algo, c.Rising, c.Seeds))
			rising = rising || RisingOnMost(c.Rising, c.Seeds)
		}
		if why[k] != "" {
			continue
		}
		c := chosen[k]
		c.Iters, c.Budget = EvalIters, fmt.Sprintf("no choice at the size rising on two thirds of its seeds (%s)", strings.Join(counts, ", "))
		if rising {
			c.Iters, c.Budget = EvalItersRising, fmt.Sprintf("a choice at the size rising on two thirds of its seeds (%s)", strings.Join(counts, ", "))
		}
	}
}

// decided says what put cands[0] (sorted by compareCandidates) ahead of cands[1].
func decided(cands []candidate) string {
	if len(cands) < 2 {
		return "the only lever set"
	}
	a, b := cands[0], cands[1]
	switch {
	case a.g.Passed != b.g.Passed:
		return fmt.Sprintf("most steady passes: %d/%d (%s: %d/%d)", a.g.Passed, a.g.Finished, b.set, b.g.Passed, b.g.Finished)
	case a.g.Passed == 0 && greedier(a.g.GreedyMean, b.g.GreedyMean):
		return fmt.Sprintf("no steady pass (0/%d), nor in %s: the higher greedy mean (%s against %s)",
			a.g.Finished, b.set, num(a.g.GreedyMean, 2), num(b.g.GreedyMean, 2))
	case a.levers != b.levers:
		return fmt.Sprintf("tied on steady passes (%d/%d) with %s: fewer levers", a.g.Passed, a.g.Finished, b.set)
	case compareCandidates(a, b) != 0:
		return fmt.Sprintf("tied on steady passes (%d/%d) and levers with %s: the higher greedy mean (%s against %s)",
			a.g.Passed, a.g.Finished, b.set, num(a.g.GreedyMean, 2), num(b.g.GreedyMean, 2))
	}
	return fmt.Sprintf("tied on steady passes (%d/%d), levers and greedy mean with %s: the earlier lever set", a.g.Passed, a.g.Finished, b.set)
}
