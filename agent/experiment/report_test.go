package experiment

import (
	"math"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
)

// A sweep report's band counts the finished runs only, as its table does: a run still under way
// (here with more rows and far higher rewards) changes neither the count nor the curve.
func TestSweepBandSkipsUnfinishedRuns(t *testing.T) {
	rows := func(n int, v float64) []runstore.Row {
		var out []runstore.Row
		for i := range n {
			out = append(out, runstore.Row{Iteration: i, MeanReward: v})
		}
		return out
	}
	done := RunResult{Status: Status{State: Finished, Iteration: 4}, Rows: rows(4, 1)}
	g := &Group{Runs: []RunResult{done, {Status: Status{State: Partial, Iteration: 8}, Rows: rows(8, 100)}}}
	b, n := bandOf(g, sampledReward)
	if n != 1 {
		t.Fatalf("band over %d runs, want the 1 finished", n)
	}
	for i, m := range b.Mean {
		if m != 1 {
			t.Errorf("band mean %d = %v, want 1 (the finished run's reward)", i, m)
		}
	}
}

// The steady rule passes a run on its last-10% greedy mean at the curriculum's top level, and
// nothing else: not a greedy evaluation that once reached the threshold, not a run still short of
// the top level, not one without evaluations.
func TestSteadyPass(t *testing.T) {
	top := algorithmic.MaxMinLength
	nan := math.NaN()
	for _, tc := range []struct {
		name      string
		env       string
		greedy    float64
		level     int
		threshold float64
		want      bool
	}{
		{"at the top, above the threshold", "Copy-v0", 26, top, 25, true},
		{"exactly the threshold", "Reverse-v0", 25, top, 25, true},
		{"below the threshold (an unsteady greedy: -1, 16.6, 15, -1, 8.8)", "Reverse-v0", 7.7, top, 25, false},
		{"above, but short of the top level", "Copy-v0", 26, top - 1, 25, false},
		{"no greedy evaluation", "Copy-v0", nan, top, 25, false},
		{"an env without a curriculum", "CartPole-v1", 480, 0, 475, true},
	} {
		if got := SteadyPass(tc.env, 5, tc.threshold, tc.greedy, tc.level); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
