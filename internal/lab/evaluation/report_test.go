package evaluation

import (
	"math"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
	"github.com/sparsepcl/sparsepcl/internal/lab/sweep"
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
	done := RunResult{Status: sweep.Status{State: sweep.Finished, Iteration: 4}, Rows: rows(4, 1)}
	g := &Group{Runs: []RunResult{done, {Status: sweep.Status{State: sweep.Partial, Iteration: 8}, Rows: rows(8, 100)}}}
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

// The budget rule's "still rising" compares the mean greedy reward over the last 10% of a run
// with the mean over the 10% before, by a margin of 5% of the threshold (1.25 at 25, 3.75 at 75).
// Each window's edge is tested from both sides, as is the margin: a window or margin one off
// changes an answer.
func TestStillRising(t *testing.T) {
	nan := math.NaN()
	// run is n iterations whose greedy reward at iteration i is greedy(i), evaluated every
	// `every` iterations (at i % every == 0, as the trainer does) and NaN in between.
	run := func(n, every int, greedy func(i int) float64) []runstore.Row {
		rows := make([]runstore.Row, n)
		for i := range rows {
			rows[i] = runstore.Row{Iteration: i, GreedyReward: nan}
			if i%every == 0 {
				rows[i].GreedyReward = greedy(i)
			}
		}
		return rows
	}
	at := func(it int, v, elsewhere float64) func(int) float64 {
		return func(i int) float64 {
			if i == it {
				return v
			}
			return elsewhere
		}
	}
	step := func(from int, before, after float64) func(int) float64 {
		return func(i int) float64 {
			if i >= from {
				return after
			}
			return before
		}
	}
	for _, tc := range []struct {
		name      string
		rows      []runstore.Row
		threshold float64
		want      bool
	}{
		// 100 iterations: the last 10% is iterations 90-99, the 10% before 80-89.
		{"flat", run(100, 1, step(0, 10, 10)), 25, false},
		{"up by exactly 5% of the threshold", run(100, 1, step(90, 10, 11.25)), 25, true},
		{"up by 4.4% of the threshold", run(100, 1, step(90, 10, 11.1)), 25, false},
		{"up by exactly 5% of a threshold of 75", run(100, 1, step(90, 10, 13.75)), 75, true},
		{"up by 4.9% of a threshold of 75", run(100, 1, step(90, 10, 13.7)), 75, false},
		{"down", run(100, 1, step(90, 10, 5)), 25, false},
		{"iteration 99, the last, is in the last window", run(100, 1, at(99, 50, 0)), 25, true},
		{"iteration 90 is in the last window", run(100, 1, at(90, 50, 0)), 25, true},
		{"iteration 89 is in the window before", run(100, 1, at(89, 50, 0)), 25, false},
		{"iteration 80 is in the window before", run(100, 1, at(80, -50, 0)), 25, true},
		{"iteration 79 is in neither", run(100, 1, at(79, -50, 0)), 25, false},
		// 2,000 iterations, an evaluation every 20 (iterations 0, 20, ...): 1800-1980 and 1600-1780.
		{"evaluations every 20: the one at 1800 is the last window's", run(2000, 20, at(1800, 22.5, 10)), 25, true},
		{"evaluations every 20: the one at 1780 is the window before's", run(2000, 20, at(1780, -2.5, 10)), 25, true},
		{"evaluations every 20: the one at 1580 is in neither", run(2000, 20, at(1580, -100, 10)), 25, false},
		// 5 iterations: windows of one iteration, 4 and 3.
		{"windows of one iteration", run(5, 1, at(4, 2, 0)), 25, true},
		{"windows of one iteration: 2 is in neither", run(5, 1, at(2, -2, 0)), 25, false},
		{"no evaluation in the window before", run(100, 1, step(90, nan, 20)), 25, false},
		{"no evaluation in the last window", run(100, 50, step(0, 0, 0)), 25, false},
		{"no rows", nil, 25, false},
	} {
		if got := StillRising(tc.rows, tc.threshold); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
