package experiment

import (
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/runstore"
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
