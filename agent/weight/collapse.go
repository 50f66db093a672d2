package weight

import (
	"fmt"
	"math"
	"slices"
)

// oneAction is the mean support size at and below which an iteration counts as collapsed onto
// one action: most states keep a single action (the mean is over the sampled states, and a few
// keep a second).
const oneAction = 1.5

// oneActionProb is the max-prob at and above which an iteration counts as collapsed whatever its
// support: a softmax policy keeps every action in its support.
const oneActionProb = 0.99

// collapsedShare is the share of a window's iterations that must count as collapsed: a collapsed
// sparse policy still shows a spread state now and then.
const collapsedShare = 0.9

// Point is one iteration as the collapse check reads it.
type Point struct {
	Iteration int
	Support   float64 // mean support size over the batch's states
	MaxProb   float64
	Return    float64 // mean sampled return (NaN when no episode ended)
}

// oneAction reports whether the policy was on one action at p: a mean support of at most 1.5
// actions (sparse), or a max-prob of 0.99 or more (soft).
func (p Point) oneAction() bool { return p.Support <= oneAction || p.MaxProb >= oneActionProb }

// CollapseCheck watches a run for a policy that collapsed onto one action without having learned
// or after losing what it learned: over the last Window iterations the support was one action
// (at least 90% of them), the return did not improve from the window's first quarter to its
// last and is below the run's Threshold (NaN: none), and either
//
//   - the run has never learned, however late the window: no stretch of Window/4 iterations
//     has had a mean return above the run's starting return (the mean of its first Window/4
//     measured returns) by that start's magnitude, so from a negative start none passed 0;
//   - or it learned and lost it, anywhere in the run: its best stretch of Window/4 iterations had
//     learned by that measure, and the mean return over the window's second half has fallen back
//     by more than half of the gain from the start to that best.
//
// A near-deterministic policy that keeps what it learned is what learning ends in, and is not
// flagged. It warns once.
type CollapseCheck struct {
	Window    int
	Threshold float64

	window  []Point   // the last Window iterations, oldest first
	initial []float64 // the run's first Window/4 measured returns: where it started
	best    float64   // the best mean return over Window/4 consecutive iterations so far (NaN: none yet)
	bestAt  int       // the last iteration of that stretch
	warned  bool
}

// NewCollapseCheck returns a check over windows of window iterations.
func NewCollapseCheck(window int, threshold float64) (*CollapseCheck, error) {
	if window < 4 {
		return nil, fmt.Errorf("collapse window %d iterations, want ≥ 4", window)
	}
	return &CollapseCheck{Window: window, Threshold: threshold, best: math.NaN()}, nil
}

// Collapse is the warning: the first collapsed iteration of the window, how many iterations
// since, and what the policy and the return did over the window. When the run had learned before
// (Lost), Best is its best stretch's mean return and BestAt that stretch's last iteration.
type Collapse struct {
	Onset, Iterations        int
	Support, MaxProb         float64
	ReturnAtOnset, ReturnNow float64
	Lost                     bool
	Best                     float64
	BestAt                   int
}

func (c Collapse) String() string {
	s := fmt.Sprintf("the policy has been on one action since iteration %d, for %d iterations "+
		"(support %.2f actions, max-prob %.3f), while its mean return did not improve (%.4g at the start, %.4g now)",
		c.Onset, c.Iterations, c.Support, c.MaxProb, c.ReturnAtOnset, c.ReturnNow)
	if c.Lost {
		s += fmt.Sprintf(", having lost what it learned (a mean return of %.4g up to iteration %d)", c.Best, c.BestAt)
	}
	return s
}

// Observe adds one iteration and returns the warning the first time the run qualifies.
func (c *CollapseCheck) Observe(p Point) (Collapse, bool) {
	if c.warned {
		return Collapse{}, false
	}
	if !math.IsNaN(p.Return) && len(c.initial) < c.Window/4 {
		c.initial = append(c.initial, p.Return)
	}
	if len(c.window) == c.Window {
		c.window = append(c.window[:0], c.window[1:]...)
	}
	c.window = append(c.window, p)
	q := c.Window / 4
	if len(c.window) >= q {
		if r := meanReturn(c.window[len(c.window)-q:]); !math.IsNaN(r) && !(r <= c.best) {
			c.best, c.bestAt = r, p.Iteration
		}
	}
	if len(c.window) < c.Window || len(c.initial) < q {
		return Collapse{}, false
	}
	collapsed := 0
	var sup, mp float64
	for _, s := range c.window {
		if s.oneAction() {
			collapsed++
		}
		sup += s.Support
		mp += s.MaxProb
	}
	if float64(collapsed) < collapsedShare*float64(len(c.window)) {
		return Collapse{}, false
	}
	// Not improved: the last quarter's mean return within 1% (of the larger magnitude, at least
	// 1e-3) of the first quarter's, or below it.
	first, last := meanReturn(c.window[:q]), meanReturn(c.window[len(c.window)-q:])
	if math.IsNaN(first) || math.IsNaN(last) || last > first+0.01*max(math.Abs(first), math.Abs(last), 1e-3) {
		return Collapse{}, false
	}
	if !math.IsNaN(c.Threshold) && last >= c.Threshold {
		return Collapse{}, false
	}
	var start float64
	for _, r := range c.initial {
		start += r
	}
	start /= float64(len(c.initial))
	// Lost: over the window's whole second half, not only its last quarter, so that a dip the
	// policy climbs out of within a few iterations is not taken for a loss.
	lost := learned(c.best, start) && meanReturn(c.window[len(c.window)/2:]) <= start+(c.best-start)/2
	// Otherwise only a run that never learned, however late it collapsed: a late collapse is what
	// learning ends in only when the run learned first (soft PCL's 5^6 schedule, seed 5, sat on
	// one action at -198 from 78% of its budget on, never having passed 0). A run that learned
	// and dipped without losing half of it is not flagged.
	if !lost && learned(c.best, start) {
		return Collapse{}, false
	}
	c.warned = true
	n := float64(len(c.window))
	onset := c.window[slices.IndexFunc(c.window, Point.oneAction)].Iteration
	w := Collapse{Onset: onset, Iterations: p.Iteration - onset + 1, Support: sup / n, MaxProb: mp / n,
		ReturnAtOnset: first, ReturnNow: last, Lost: lost}
	if lost {
		w.Best, w.BestAt = c.best, c.bestAt
	}
	return w, true
}

// learned reports whether a mean return r has moved up from the run's start by at least that
// start's magnitude (from a negative start: it has passed 0).
func learned(r, start float64) bool { return r >= start+math.Abs(start) && r > start }

// meanReturn is the mean of the measured returns (NaN when none is).
func meanReturn(ps []Point) float64 {
	var s float64
	n := 0
	for _, p := range ps {
		if !math.IsNaN(p.Return) {
			s += p.Return
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return s / float64(n)
}
