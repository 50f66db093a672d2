package train

import (
	"math"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/runstore"
)

func TestVerdict(t *testing.T) {
	nan := math.NaN()
	rows := func(greedy ...float64) []runstore.Row {
		var rs []runstore.Row
		for i, g := range greedy {
			rs = append(rs, runstore.Row{Iteration: i, GreedyReward: g})
		}
		return rs
	}
	cases := []struct {
		name      string
		rows      []runstore.Row
		threshold float64
		want      string
	}{
		{"solved", rows(nan, 3, nan, 25.004, 31), 25, "solved at iteration 3 (greedy 25.00 ≥ threshold 25)"},
		{"exactly at the threshold", rows(1, 5), 5, "solved at iteration 1 (greedy 5.00 ≥ threshold 5)"},
		{"not solved", rows(nan, 3.5, nan, 4.104, 2), 25, "not solved in 5 iterations: best greedy 4.10 at iteration 3 (threshold 25)"},
		{"negative rewards", rows(-0.5, -0.3333333, -0.4), 0.5, "not solved in 3 iterations: best greedy -0.33 at iteration 1 (threshold 0.5)"},
		{"no evaluation", rows(nan, nan), 25, "not solved in 2 iterations: no greedy evaluation ran (threshold 25)"},
		{"no rows", nil, 3000, "not solved in 0 iterations: no greedy evaluation ran (threshold 3000)"},
		{"no threshold", rows(nan, -21.5, -3.256), nan, "no threshold: best greedy -3.26 at iteration 2 in 3 iterations"},
		{"no threshold, no evaluation", rows(nan), nan, "no threshold: no greedy evaluation ran in 1 iterations"},
	}
	for _, tc := range cases {
		if got := Verdict(tc.rows, len(tc.rows), tc.threshold); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
