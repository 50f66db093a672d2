package plot

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sparsepcl/sparsepcl/agent/config"
)

// AlgoLabel names an algorithm with its regularisation weight: "sparse α = 0.05", "soft τ = 0.01"
// (soft PCL's weight is its temperature), "tsallis q = 1.5, α = 0.1".
func AlgoLabel(algo config.Algo, weight, q float64) string {
	switch algo {
	case config.AlgoSoft:
		return fmt.Sprintf("soft τ = %g", weight)
	case config.AlgoTsallis:
		return fmt.Sprintf("tsallis q = %g, α = %g", q, weight)
	}
	return fmt.Sprintf("%s α = %g", algo, weight)
}

// AlgosLabel names the algorithms of a comparison in order, without repeats: "sparse vs soft PCL".
func AlgosLabel(algos []config.Algo) string {
	var seen []string
	for _, a := range algos {
		if !slices.Contains(seen, string(a)) {
			seen = append(seen, string(a))
		}
	}
	return strings.Join(seen, " vs ") + " PCL"
}

// SizeLabel is an env's size: "|A| = 20 (base 5)" for an algorithmic task, "grid 3 (|A| = 729)"
// for a continuous-control env with an action grid, "|A| = 2" otherwise. Zero counts are left
// out ("grid 3" when |A| is not known).
func SizeLabel(actions, base, grid int) string {
	a := ""
	if actions > 0 {
		a = fmt.Sprintf("|A| = %s", thousands(actions))
	}
	switch {
	case grid > 0 && a != "":
		return fmt.Sprintf("grid %d (%s)", grid, a)
	case grid > 0:
		return fmt.Sprintf("grid %d", grid)
	case base > 0 && a != "":
		return fmt.Sprintf("%s (base %d)", a, base)
	case base > 0:
		return fmt.Sprintf("base %d", base)
	}
	return a
}

// SeedsLabel says what a band over lo to hi seeds shows: "1 seed", "mean and min–max over 5
// seeds", "mean and min–max over 1–3 seeds" when the groups of a figure differ.
func SeedsLabel(lo, hi int) string {
	switch {
	case hi <= 1:
		return "1 seed"
	case lo == hi:
		return fmt.Sprintf("mean and min–max over %d seeds", hi)
	}
	return fmt.Sprintf("mean and min–max over %d–%d seeds", lo, hi)
}

// thousands prints n with commas between groups of three digits: 15,625.
func thousands(n int) string {
	return groupThousands(fmt.Sprint(n))
}
