package pcl

import (
	"fmt"
	"slices"
	"strings"
)

// LogitGaps describes how far below the best action the other actions' logits z sit in the
// states a policy visits, on the policy's own scale (the argument of its softmax or sparsemax,
// Heads.Logits): for soft PCL a gap of g is a probability e^-g times the best's, and
// sparsemax keeps only actions within 1 of the best. It tells a narrow policy that can widen
// again from one that cannot: the gradient reaching an action is proportional to its
// probability under softmax, e^-gap, and zero outside the sparsemax support, which a small
// change of z re-enters when the gap is small.
type LogitGaps struct {
	Actions    int
	States     int
	Thresholds []float64
	// Within[i] is the mean number of actions, the best included, whose logit is within
	// Thresholds[i] of the best, per state.
	Within []float64
	// P10, Median and P90 are quantiles of the gaps of the other actions, over the states the
	// counter sampled (every n-th, NewGapCounter).
	P10, Median, P90 float64
}

// String reads like "actions within 1 / 2 / 5 of the best logit, per state: 20.6 / 574.5 /
// 14033.3 of 15625; gaps of the others: median 3.80 (10% 2.50, 90% 8.10), over 1000 states".
func (g LogitGaps) String() string {
	if g.States == 0 {
		return "no states"
	}
	ths, within := make([]string, len(g.Thresholds)), make([]string, len(g.Within))
	for i, t := range g.Thresholds {
		ths[i] = fmt.Sprintf("%g", t)
		within[i] = fmt.Sprintf("%.1f", g.Within[i])
	}
	return fmt.Sprintf("actions within %s of the best logit, per state: %s of %d; gaps of the others: median %.2f (10%% %.2f, 90%% %.2f), over %d states",
		strings.Join(ths, " / "), strings.Join(within, " / "), g.Actions, g.Median, g.P10, g.P90, g.States)
}

// GapThresholds are the gaps LogitGaps counts by default: sparsemax's support bound (1), and
// soft probabilities from e^-2 down to e^-30 of the best's.
func GapThresholds() []float64 { return []float64{1, 2, 5, 10, 30} }

// GapCounter accumulates LogitGaps over the rows of logits it is given.
type GapCounter struct {
	thresholds  []float64
	counts      []float64
	sample      []float32 // the gaps of every sampleEvery-th row
	sampleEvery int
	states      int
	actions     int
}

// NewGapCounter counts actions within each of thresholds (ascending, positive) of the best, and
// keeps the gaps of every sampleEvery-th row for the quantiles.
func NewGapCounter(thresholds []float64, sampleEvery int) (*GapCounter, error) {
	if len(thresholds) == 0 || !slices.IsSorted(thresholds) || !(thresholds[0] > 0) {
		return nil, fmt.Errorf("pcl: gap thresholds %v, want positive and ascending", thresholds)
	}
	if sampleEvery < 1 {
		return nil, fmt.Errorf("pcl: gap sample period %d, want >= 1", sampleEvery)
	}
	return &GapCounter{thresholds: slices.Clone(thresholds), counts: make([]float64, len(thresholds)), sampleEvery: sampleEvery}, nil
}

// Add counts one state's logits z.
func (c *GapCounter) Add(z []float32) {
	if len(z) == 0 {
		return
	}
	best := slices.Max(z)
	keep := c.states%c.sampleEvery == 0
	skippedBest := false
	for _, v := range z {
		gap := float64(best - v)
		for i, t := range c.thresholds {
			if gap <= t {
				c.counts[i]++
			}
		}
		if keep {
			if v == best && !skippedBest {
				skippedBest = true // the best's own gap, 0, is not one of the others'
				continue
			}
			c.sample = append(c.sample, float32(gap))
		}
	}
	c.states++
	c.actions = len(z)
}

// Result is what was counted so far.
func (c *GapCounter) Result() LogitGaps {
	g := LogitGaps{Actions: c.actions, States: c.states, Thresholds: slices.Clone(c.thresholds), Within: make([]float64, len(c.counts))}
	if c.states == 0 {
		return g
	}
	for i, n := range c.counts {
		g.Within[i] = n / float64(c.states)
	}
	if n := len(c.sample); n > 0 {
		s := slices.Clone(c.sample)
		slices.Sort(s)
		q := func(p float64) float64 { return float64(s[min(n-1, int(p*float64(n)))]) }
		g.P10, g.Median, g.P90 = q(0.1), q(0.5), q(0.9)
	}
	return g
}
