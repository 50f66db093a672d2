package sweep

import (
	"flag"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sparsepcl/sparsepcl/agent/config"
)

// Grid is the command-line description of a sweep's cells, each field as typed.
type Grid struct {
	// Preset "figure1" is the paper's tasks and sizes, "figure1-largest" each task's largest size
	// of them (Envs, Actions and Bases must be empty).
	Preset string
	Envs   string // comma-separated env ids
	// Actions are comma-separated |A| (the base is derived per task), each for every task, or
	// env:|A| for one ("40,Copy-v0:160": Copy at 160, the others at 40); Bases the same in bases
	// instead.
	Actions, Bases string
	// Algos are comma-separated algorithms, each for every task, or env:algo for one
	// ("sparse,Reverse-v0:soft": soft PCL alone on Reverse, sparse PCL on the others).
	Algos string
	// Weights per algorithm: comma-separated values, each for every task, or env:value for one
	// task ("Copy-v0:0.01,Reverse-v0:0.05,0.1": 0.01 on Copy, 0.05 on Reverse, 0.1 on the others).
	SparseAlphas, SoftAlphas, TsallisAlphas string
	TsallisQs                               string // comma-separated q for the tsallis algorithm
	// ItersPerEnv overrides the budget per task: "Copy-v0:2000,Reverse-v0:3000".
	ItersPerEnv string
	// Controls are comma-separated weight controls, each a cell of every (task, size, algorithm,
	// weight): fixed, decay (from StartFactor times the weight down to it, at the base config's
	// alpha_decay) and auto. Empty: the base config's control for every cell.
	Controls    string
	StartFactor float64
}

// RegisterFlags registers the grid's fields as the flags of pcl sweep plan, the way
// config.Config.RegisterFlags registers a run's.
func (g *Grid) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&g.Preset, "preset", "", `"figure1": the paper's tasks and sizes; "figure1-largest": each task's largest of them`)
	fs.StringVar(&g.Envs, "envs", "", "comma-separated env ids")
	fs.StringVar(&g.Actions, "actions", "", "comma-separated action-space sizes |A| (the base is derived per task), each for every task or env:|A| for one")
	fs.StringVar(&g.Bases, "bases", "", "comma-separated bases (instead of --actions), each for every task or env:base for one")
	fs.StringVar(&g.Algos, "algos", "sparse,soft", "comma-separated algorithms, each for every task or env:algo for one")
	fs.StringVar(&g.SparseAlphas, "sparse-alphas", "", "comma-separated alphas of sparse PCL, each for every task or env:alpha for one")
	fs.StringVar(&g.SoftAlphas, "soft-alphas", "", "comma-separated taus of soft PCL, each for every task or env:tau for one")
	fs.StringVar(&g.TsallisAlphas, "tsallis-alphas", "", "comma-separated alphas of Tsallis PCL, each for every task or env:alpha for one")
	fs.StringVar(&g.TsallisQs, "tsallis-qs", "", "comma-separated q of Tsallis PCL")
	fs.StringVar(&g.ItersPerEnv, "iters-per-env", "", "budget per task, env:iterations,... (default --iters)")
	fs.StringVar(&g.Controls, "alpha-controls", "", `comma-separated weight controls, each a cell: "fixed", "decay" (from --alpha-start-factor times the weight, by --alpha-decay), "auto" (default: --alpha-start and --alpha-auto for every cell)`)
	fs.Float64Var(&g.StartFactor, "alpha-start-factor", 10, `start of the "decay" control's schedule, as a multiple of the weight`)
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// perEnv are the items of a list flag per env id, "" holding those given for every env not named:
// "40,Copy-v0:160" is {"": [40], "Copy-v0": [160]}.
type perEnv map[string][]string

func splitPerEnv(s string) perEnv {
	p := perEnv{}
	for _, item := range splitList(s) {
		env, value, ok := strings.Cut(item, ":")
		if !ok {
			env, value = "", item
		}
		p[env] = append(p[env], value)
	}
	return p
}

// of are env's items: those given for it, else those given for every env.
func (p perEnv) of(env string) []string {
	if v, ok := p[env]; ok {
		return v
	}
	return p[""]
}

// named refuses an env named in flag name that the sweep does not run.
func (p perEnv) named(name string, sizes []gridSize) error {
	for _, env := range slices.Sorted(maps.Keys(p)) {
		if env != "" && !hasEnv(sizes, env) {
			return fmt.Errorf("sweep: --%s names %s, which the sweep does not run", name, env)
		}
	}
	return nil
}

func floats(s, name string) ([]float64, error) {
	var out []float64
	for _, f := range splitList(s) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || !(v > 0) {
			return nil, fmt.Errorf("sweep: --%s: %q is not a positive number", name, f)
		}
		out = append(out, v)
	}
	return out, nil
}

func ints(s, name string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("sweep: --%s: %q is not a positive integer", name, f)
		}
		out = append(out, v)
	}
	return out, nil
}

// envWeights are an algorithm's weights per env id; "" holds those of every env not named.
type envWeights map[string][]float64

func (w envWeights) of(env string) []float64 {
	if v, ok := w[env]; ok {
		return v
	}
	return w[""]
}

// parseWeights reads "0.01,0.05" (every env) mixed with "Copy-v0:0.01" (one env).
func parseWeights(s, name string) (envWeights, error) {
	w := envWeights{}
	for _, item := range splitList(s) {
		env, value, ok := strings.Cut(item, ":")
		if !ok {
			env, value = "", item
		}
		v, err := floats(value, name)
		if err != nil {
			return nil, err
		}
		w[env] = append(w[env], v...)
	}
	return w, nil
}

// Cells expands the grid into cells. Every algorithm named needs its weights.
func (g Grid) Cells() ([]Cell, error) {
	sizes, err := g.sizes()
	if err != nil {
		return nil, err
	}
	iters, err := g.itersPerEnv(sizes)
	if err != nil {
		return nil, err
	}
	algosOf, algos, err := g.algos(sizes)
	if err != nil {
		return nil, err
	}
	weights := map[config.Algo]envWeights{}
	qs := []float64{0}
	for _, a := range algos {
		w, aqs, err := g.weightsOf(a, sizes, algosOf)
		if err != nil {
			return nil, err
		}
		if aqs != nil {
			qs = aqs
		}
		weights[a] = w
	}
	controls, err := g.controls()
	if err != nil {
		return nil, err
	}
	var cells []Cell
	for _, s := range sizes {
		for _, a := range algosOf[s.env] {
			aq := []float64{0}
			if a == config.AlgoTsallis {
				aq = qs
			}
			for _, q := range aq {
				for _, w := range weights[a].of(s.env) {
					for _, ctl := range controls {
						cell := Cell{Env: s.env, Base: s.base, Algo: a, Alpha: w, Q: q, Iters: iters[s.env], Control: ctl}
						if ctl == ControlDecay {
							cell.AlphaStart = g.StartFactor * w
						}
						cells = append(cells, cell)
					}
				}
			}
		}
	}
	return cells, nil
}

// gridSize is one task at one alphabet size.
type gridSize struct {
	env  string
	base int
}

// hasEnv reports whether sizes run env.
func hasEnv(sizes []gridSize, env string) bool {
	return slices.ContainsFunc(sizes, func(s gridSize) bool { return s.env == env })
}

// sizes are the grid's tasks and sizes: the preset's, or --envs at --actions or --bases.
func (g Grid) sizes() ([]gridSize, error) {
	var sizes []gridSize
	if g.Preset != "" {
		if g.Preset != "figure1" && g.Preset != "figure1-largest" {
			return nil, fmt.Errorf("sweep: unknown preset %q (known: figure1, figure1-largest)", g.Preset)
		}
		if g.Envs != "" || g.Actions != "" || g.Bases != "" {
			return nil, fmt.Errorf("sweep: --preset gives the tasks and sizes; drop --envs, --actions and --bases")
		}
		for _, t := range Figure1() {
			actions := t.Actions
			if g.Preset == "figure1-largest" {
				actions = []int{slices.Max(t.Actions)}
			}
			for _, a := range actions {
				b, err := BaseFor(t.Env, a)
				if err != nil {
					return nil, err
				}
				sizes = append(sizes, gridSize{t.Env, b})
			}
		}
		return sizes, nil
	}
	envs := splitList(g.Envs)
	if len(envs) == 0 {
		return nil, fmt.Errorf("sweep: give --envs (and --actions or --bases), or --preset figure1")
	}
	if (g.Actions == "") == (g.Bases == "") {
		return nil, fmt.Errorf("sweep: give exactly one of --actions and --bases")
	}
	list, name := g.Actions, "actions"
	if list == "" {
		list, name = g.Bases, "bases"
	}
	per := splitPerEnv(list)
	for _, env := range envs {
		ns, err := ints(strings.Join(per.of(env), ","), name)
		if err != nil {
			return nil, err
		}
		if len(ns) == 0 {
			return nil, fmt.Errorf("sweep: --%s gives no size for %s", name, env)
		}
		for _, n := range ns {
			b := n
			if name == "actions" {
				b, err = BaseFor(env, n)
			} else {
				_, err = NumActions(env, n)
			}
			if err != nil {
				return nil, err
			}
			sizes = append(sizes, gridSize{env, b})
		}
	}
	if err := per.named(name, sizes); err != nil {
		return nil, err
	}
	return sizes, nil
}

// algos are the algorithms each env of sizes runs (--algos), and all of them in the order they
// first appear.
func (g Grid) algos(sizes []gridSize) (map[string][]config.Algo, []config.Algo, error) {
	per := splitPerEnv(g.Algos)
	if len(per) == 0 {
		return nil, nil, fmt.Errorf("sweep: --algos is empty")
	}
	if err := per.named("algos", sizes); err != nil {
		return nil, nil, err
	}
	for _, item := range splitList(g.Algos) {
		_, a, ok := strings.Cut(item, ":")
		if !ok {
			a = item
		}
		switch config.Algo(a) {
		case config.AlgoSparse, config.AlgoSoft, config.AlgoTsallis:
		default:
			return nil, nil, fmt.Errorf("sweep: --algos: unknown algorithm %q (sparse, soft, tsallis)", a)
		}
	}
	of := map[string][]config.Algo{}
	var all []config.Algo
	for _, s := range sizes {
		if _, ok := of[s.env]; ok {
			continue
		}
		names := per.of(s.env)
		if len(names) == 0 {
			return nil, nil, fmt.Errorf("sweep: --algos gives no algorithm for %s", s.env)
		}
		for _, a := range names {
			of[s.env] = append(of[s.env], config.Algo(a))
			if !slices.Contains(all, config.Algo(a)) {
				all = append(all, config.Algo(a))
			}
		}
	}
	return of, all, nil
}

// itersPerEnv parses --iters-per-env (env:iterations, ...) for the envs of sizes.
func (g Grid) itersPerEnv(sizes []gridSize) (map[string]int, error) {
	iters := map[string]int{}
	for _, item := range splitList(g.ItersPerEnv) {
		env, n, ok := strings.Cut(item, ":")
		v, err := strconv.Atoi(n)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("sweep: --iters-per-env: %q is not env:iterations", item)
		}
		if !hasEnv(sizes, env) {
			return nil, fmt.Errorf("sweep: --iters-per-env names %s, which the sweep does not run", env)
		}
		iters[env] = v
	}
	return iters, nil
}

// weightsOf parses algorithm a's weights for the envs of sizes that run it (algosOf) and, for
// Tsallis PCL, its entropic indices (nil for the others).
func (g Grid) weightsOf(a config.Algo, sizes []gridSize, algosOf map[string][]config.Algo) (envWeights, []float64, error) {
	var s, name string
	var qs []float64
	switch a {
	case config.AlgoSparse:
		s, name = g.SparseAlphas, "sparse-alphas"
	case config.AlgoSoft:
		s, name = g.SoftAlphas, "soft-alphas"
	case config.AlgoTsallis:
		s, name = g.TsallisAlphas, "tsallis-alphas"
		var err error
		if qs, err = floats(g.TsallisQs, "tsallis-qs"); err != nil {
			return nil, nil, err
		}
		if len(qs) == 0 {
			return nil, nil, fmt.Errorf("sweep: the tsallis algorithm needs --tsallis-qs")
		}
	default:
		return nil, nil, fmt.Errorf("sweep: --algos: unknown algorithm %q (sparse, soft, tsallis)", a)
	}
	w, err := parseWeights(s, name)
	if err != nil {
		return nil, nil, err
	}
	for env := range w {
		switch {
		case env == "":
		case !hasEnv(sizes, env):
			return nil, nil, fmt.Errorf("sweep: --%s names %s, which the sweep does not run", name, env)
		case !slices.Contains(algosOf[env], a):
			return nil, nil, fmt.Errorf("sweep: --%s names %s, where --algos does not run %s", name, env, a)
		}
	}
	for _, sz := range sizes {
		if !slices.Contains(algosOf[sz.env], a) {
			continue
		}
		if len(w.of(sz.env)) == 0 {
			return nil, nil, fmt.Errorf("sweep: algorithm %s needs --%s for %s", a, name, sz.env)
		}
	}
	return w, qs, nil
}

// controls are the grid's weight controls, [""] (the base config's) when it names none.
func (g Grid) controls() ([]string, error) {
	names := splitList(g.Controls)
	if len(names) == 0 {
		return []string{""}, nil
	}
	for i, n := range names {
		switch n {
		case ControlFixed, ControlAuto:
		case ControlDecay:
			if !(g.StartFactor > 1) || math.IsInf(g.StartFactor, 0) {
				return nil, fmt.Errorf("sweep: --alpha-start-factor %g: the %s control starts above the weight, want a finite factor > 1", g.StartFactor, ControlDecay)
			}
		default:
			return nil, fmt.Errorf("sweep: --alpha-controls: unknown control %q (%s, %s, %s)", n, ControlFixed, ControlDecay, ControlAuto)
		}
		if slices.Contains(names[:i], n) {
			return nil, fmt.Errorf("sweep: --alpha-controls names %s twice", n)
		}
	}
	return names, nil
}
