package weight

import (
	"fmt"
	"math"
)

// Auto learns the weight as Soft Actor-Critic learns its temperature, but with a target on the
// policy's max-prob instead of its entropy: a number a user can state without knowing |A| (0.5
// means "the most likely action half the time", at 729 actions as at 15,625), where an entropy
// target scales with log |A| (6.6 nats at 3^6, 9.7 at 5^6) and the Tsallis entropy ½(1 − Σπ²)
// squeezes every near-deterministic policy into [0, 0.1].
//
// Each iteration takes one gradient step on log α of
//
//	J(log α) = −log α · (MaxProb − target),  dJ/dlog α = target − MaxProb,
//
// so log α rises by Rate·(MaxProb − target): α grows while the policy is more deterministic
// than the target and shrinks while it is more spread. The step is on log α, so that the same
// Rate serves weights a thousand times apart, and log α is kept in [log Min, log Max].
//
// One asymmetry comes from the first HalfCheetah probes (docs/halfcheetah.md §5): a
// policy starts more spread than any useful target (sparse 0.2, soft 0.00 at 3^6), and lowering
// α then is what drove it into a collapse within 10,000 steps. So α does not fall until the
// policy has first reached the target, or until Grace iterations have passed: a policy that
// trails the rising target from the start (one HalfCheetah 3^6 seed: max-prob 0.62-0.72 against
// a target going 0.5 → 0.9) would otherwise keep α at its start for the whole run (α was exactly
// 1 for 1M steps). UpRate can make α rise faster than it falls; its default is 1, because a probe at 4 sent α from 0.05 to 9.6 within 60,000 steps of a collapse, far past
// any useful weight, before the policy spread again.
//
// The target itself may rise over training, from TargetStart toward TargetEnd by the released
// code's exponential form (the gap shrinks by TargetRate every 100 iterations): spread early,
// while V still lags its target and a collapse would be premature, near-deterministic late,
// which is where the runs that learn end (max-prob 0.97-1.00 at 500,000 steps on HalfCheetah).
type Auto struct {
	TargetStart, TargetEnd, TargetRate float64
	Rate                               float64 // step on log α per unit of max-prob error
	UpRate                             float64 // factor on Rate when α rises
	Min, Max                           float64 // bounds on α
	// Grace is the iteration from which α may fall although the policy has never reached the
	// target (0: not before it has).
	Grace int

	state AutoState
}

// AutoState is what a checkpoint saves of an Auto: log α, exactly, and whether the policy has
// reached the target yet.
type AutoState struct {
	LogAlpha float64 `json:"log_alpha"`
	Reached  bool    `json:"reached"`
}

// AutoOptions are the settings of NewAuto; zero fields take the defaults in DefaultAuto.
type AutoOptions struct {
	Start                              float64 // the initial α
	TargetStart, TargetEnd, TargetRate float64
	Rate, UpRate, Min, Max             float64
	Grace                              int
}

// DefaultAuto is the automatic weight's default settings around an initial weight.
func DefaultAuto(start float64) AutoOptions {
	return AutoOptions{Start: start, TargetStart: 0.5, TargetEnd: 0.9, TargetRate: 0.9, Rate: 0.01, UpRate: 1, Min: 1e-4, Max: 10,
		Grace: 1000}
}

// NewAuto checks o and returns the controller at α = o.Start.
func NewAuto(o AutoOptions) (*Auto, error) {
	in01 := func(v float64) bool { return v > 0 && v < 1 }
	switch {
	case !(o.Min > 0) || !(o.Max >= o.Min) || math.IsInf(o.Max, 0):
		return nil, fmt.Errorf("alpha bounds [%v, %v], want 0 < min ≤ max < ∞", o.Min, o.Max)
	case !(o.Start >= o.Min && o.Start <= o.Max):
		return nil, fmt.Errorf("initial alpha %v outside [%v, %v]", o.Start, o.Min, o.Max)
	case !in01(o.TargetStart) || !in01(o.TargetEnd):
		return nil, fmt.Errorf("max-prob targets %v → %v, want each in (0, 1)", o.TargetStart, o.TargetEnd)
	case !(o.TargetRate > 0 && o.TargetRate <= 1):
		return nil, fmt.Errorf("max-prob target rate %v, want in (0, 1]", o.TargetRate)
	case !(o.Rate > 0) || math.IsInf(o.Rate, 0):
		return nil, fmt.Errorf("alpha learning rate %v, want > 0", o.Rate)
	case !(o.UpRate >= 1) || math.IsInf(o.UpRate, 0):
		return nil, fmt.Errorf("alpha up-rate factor %v, want ≥ 1", o.UpRate)
	case o.Grace < 0:
		return nil, fmt.Errorf("alpha grace %d iterations, want ≥ 0", o.Grace)
	}
	return &Auto{TargetStart: o.TargetStart, TargetEnd: o.TargetEnd, TargetRate: o.TargetRate, Rate: o.Rate,
		UpRate: o.UpRate, Min: o.Min, Max: o.Max, Grace: o.Grace, state: AutoState{LogAlpha: math.Log(o.Start)}}, nil
}

// Target is the max-prob target at iteration it.
func (a *Auto) Target(it int) float64 {
	return a.TargetEnd - (a.TargetEnd-a.TargetStart)*math.Pow(a.TargetRate, float64(it)/100)
}

// Objective is J(log α) at the given log α, max-prob and iteration; Gradient is its derivative.
func (a *Auto) Objective(logAlpha float64, it int, s Stats) float64 {
	return -logAlpha * (s.MaxProb - a.Target(it))
}

// Gradient is dJ/dlog α.
func (a *Auto) Gradient(it int, s Stats) float64 { return a.Target(it) - s.MaxProb }

// Alpha takes one step on log α from the batch measured at iteration it and returns the new
// weight: Rate·(MaxProb − target), times UpRate when positive, and none downward before the
// policy has first reached the target or iteration Grace (when set) has come. A batch without a measurement (NaN max-prob) leaves α
// where it is.
func (a *Auto) Alpha(it int, s Stats) float64 {
	if !math.IsNaN(s.MaxProb) {
		g := a.Gradient(it, s)
		if g <= 0 {
			a.state.Reached = true
		}
		switch {
		case g < 0:
			a.state.LogAlpha -= a.UpRate * a.Rate * g
		case a.state.Reached || (a.Grace > 0 && it >= a.Grace):
			a.state.LogAlpha -= a.Rate * g
		}
		a.state.LogAlpha = min(max(a.state.LogAlpha, math.Log(a.Min)), math.Log(a.Max))
	}
	return math.Exp(a.state.LogAlpha)
}

// Current is the weight now, without a step.
func (a *Auto) Current() float64 { return math.Exp(a.state.LogAlpha) }

// State is what a checkpoint saves.
func (a *Auto) State() AutoState { return a.state }

// SetState restores the state State returned, as a resumed run must.
func (a *Auto) SetState(st AutoState) error {
	if !(st.LogAlpha >= math.Log(a.Min) && st.LogAlpha <= math.Log(a.Max)) {
		return fmt.Errorf("restored log alpha %v outside [log %v, log %v]", st.LogAlpha, a.Min, a.Max)
	}
	a.state = st
	return nil
}
