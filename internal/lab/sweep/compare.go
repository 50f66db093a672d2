package sweep

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sparsepcl/sparsepcl/agent/config"
)

// Compare is the preset behind `pcl compare`: sparse against soft PCL on each base of one
// algorithmic task, each algorithm with its weight per base.
type Compare struct {
	Env   string
	Bases string // comma-separated bases
	// SparseAlpha and SoftAlpha are the weights: "" (each algorithm's default), one number for
	// every base, or base:weight for each base ("5:0.05,40:0.02").
	SparseAlpha, SoftAlpha string
}

// RegisterFlags registers the preset's fields as the flags of pcl compare.
func (c *Compare) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Bases, "bases", "5,40", "comma-separated bases of the algorithmic task")
	fs.StringVar(&c.SparseAlpha, "sparse-alpha", "", "alpha of sparse PCL: one value, or per base as base:alpha,... like 5:0.05,40:0.05 (default: the per-algorithm default)")
	fs.StringVar(&c.SoftAlpha, "soft-alpha", "", "tau of soft PCL: one value, or per base as base:tau,... (default: the per-algorithm default)")
}

// Cells expands the preset into the cells of a sweep: per base, sparse then soft.
func (c Compare) Cells() ([]Cell, error) {
	bases, err := ints(c.Bases, "bases")
	if err != nil {
		return nil, err
	}
	if len(bases) == 0 {
		return nil, fmt.Errorf("compare: --bases is empty")
	}
	algos := []config.Algo{config.AlgoSparse, config.AlgoSoft}
	weights := map[config.Algo]map[int]float64{}
	for i, algo := range algos {
		s := []string{c.SparseAlpha, c.SoftAlpha}[i]
		w, err := baseWeights(s, string(algo)+"-alpha", bases, func(b int) float64 { return config.DefaultAlpha(algo, b) })
		if err != nil {
			return nil, err
		}
		weights[algo] = w
	}
	var cells []Cell
	for _, b := range bases {
		if _, err := NumActions(c.Env, b); err != nil {
			return nil, err
		}
		for _, a := range algos {
			cells = append(cells, Cell{Env: c.Env, Base: b, Algo: a, Alpha: weights[a][b]})
		}
	}
	return cells, nil
}

// baseWeights parses a weight flag of compare: "" (def(base) for every base), one number for
// every base, or a per-base list "base:weight,..." that must give each base exactly one weight
// and no base outside bases.
func baseWeights(s, name string, bases []int, def func(base int) float64) (map[int]float64, error) {
	out := map[int]float64{}
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		for _, b := range bases {
			out[b] = def(b)
		}
	case !strings.Contains(s, ":"):
		w, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("--%s: %q is neither a number nor a list like 5:0.05,40:0.02", name, s)
		}
		for _, b := range bases {
			out[b] = w
		}
	default:
		for _, item := range strings.Split(s, ",") {
			bs, ws, ok := strings.Cut(strings.TrimSpace(item), ":")
			b, errB := strconv.Atoi(strings.TrimSpace(bs))
			w, errW := strconv.ParseFloat(strings.TrimSpace(ws), 64)
			if !ok || errB != nil || errW != nil {
				return nil, fmt.Errorf("--%s: %q is not base:weight", name, item)
			}
			if !slices.Contains(bases, b) {
				return nil, fmt.Errorf("--%s: base %d is not among the bases compared %v", name, b, bases)
			}
			if _, dup := out[b]; dup {
				return nil, fmt.Errorf("--%s: base %d has two weights", name, b)
			}
			out[b] = w
		}
		for _, b := range bases {
			if _, ok := out[b]; !ok {
				return nil, fmt.Errorf("--%s: base %d has no weight (give base:weight for every base, or one number for all)", name, b)
			}
		}
	}
	return out, nil
}
