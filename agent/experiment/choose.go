package experiment

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
