package weight

import (
	"fmt"
	"math"
)

// oneAction is the mean support size at and below which a policy counts as collapsed onto one
// action (a few states may keep a second action).
const oneAction = 1.05

// Point is one iteration as the collapse check reads it.
type Point struct {
	Iteration int
	Support   float64 // mean support size over the batch's states
	MaxProb   float64
	Return    float64 // mean sampled return (NaN when no episode ended)
}

// CollapseCheck watches a run for a policy that collapsed onto one action before it learned:
// the support has stayed at one action for Window iterations, the return has not improved over
// that stretch, the stretch began in the first half of the run's Budget (a near-deterministic
// policy late in training is what learning ends in, and is not flagged) and the return is below
// the run's Threshold (NaN: none). It warns once.
type CollapseCheck struct {
	Window, Budget int
	Threshold      float64

	onset   int // first iteration of the current one-action stretch; -1 outside one
	stretch []Point
	warned  bool
}

// NewCollapseCheck returns a check over a run of budget iterations.
func NewCollapseCheck(window, budget int, threshold float64) (*CollapseCheck, error) {
	if window < 4 {
		return nil, fmt.Errorf("collapse window %d iterations, want ≥ 4", window)
	}
	return &CollapseCheck{Window: window, Budget: budget, Threshold: threshold, onset: -1}, nil
}

// Collapse is the warning: where the stretch began, its length, and what the policy and the
// return did over it.
type Collapse struct {
	Onset, Iterations        int
	Support, MaxProb         float64
	ReturnAtOnset, ReturnNow float64
}

func (c Collapse) String() string {
	return fmt.Sprintf("the policy collapsed onto one action at iteration %d and has stayed there for %d iterations "+
		"(support %.2f actions, max-prob %.3f) while its mean return did not improve (%.4g at the start of the stretch, %.4g now)",
		c.Onset, c.Iterations, c.Support, c.MaxProb, c.ReturnAtOnset, c.ReturnNow)
}

// Observe adds one iteration and returns the warning the first time the run qualifies.
func (c *CollapseCheck) Observe(p Point) (Collapse, bool) {
	if c.warned {
		return Collapse{}, false
	}
	if !(p.Support <= oneAction) {
		c.onset, c.stretch = -1, c.stretch[:0]
		return Collapse{}, false
	}
	if c.onset < 0 {
		c.onset = p.Iteration
	}
	c.stretch = append(c.stretch, p)
	if len(c.stretch) < c.Window || 2*c.onset >= c.Budget {
		return Collapse{}, false
	}
	// The return over the first and the last quarter of the stretch: not improved when the last
	// is within 1% (of the larger magnitude, at least 1e-3) of the first, or below it.
	q := len(c.stretch) / 4
	first, last := meanReturn(c.stretch[:q]), meanReturn(c.stretch[len(c.stretch)-q:])
	if math.IsNaN(first) || math.IsNaN(last) {
		return Collapse{}, false
	}
	if last > first+0.01*max(math.Abs(first), math.Abs(last), 1e-3) {
		return Collapse{}, false
	}
	if !math.IsNaN(c.Threshold) && last >= c.Threshold {
		return Collapse{}, false
	}
	c.warned = true
	var sup, mp float64
	for _, s := range c.stretch {
		sup += s.Support
		mp += s.MaxProb
	}
	n := float64(len(c.stretch))
	return Collapse{Onset: c.onset, Iterations: len(c.stretch), Support: sup / n, MaxProb: mp / n,
		ReturnAtOnset: first, ReturnNow: last}, true
}

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
