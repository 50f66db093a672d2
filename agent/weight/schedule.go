package weight

import (
	"fmt"
	"math"
)

// Stats is what a Controller reads of the last sampled batch.
type Stats struct {
	// MaxProb is the mean, over the batch's visited states, of the probability of the most
	// likely action.
	MaxProb float64
}

// Controller gives the weight of each training iteration.
type Controller interface {
	// Alpha returns the weight for iteration it (0-based), after the batch that iteration
	// sampled was measured as s. Controllers with state (Auto) must be called once per
	// iteration, in order.
	Alpha(it int, s Stats) float64
}

// Fixed is a constant weight: the behaviour of a run given --alpha.
type Fixed float64

// Alpha returns the constant.
func (f Fixed) Alpha(int, Stats) float64 { return float64(f) }

// Decay is the released PCL code's schedule, α(it) = max(Start · Rate^(it/100), Floor): an
// exponential decay from Start, by a factor Rate every 100 iterations, down to Floor.
type Decay struct {
	Start, Rate, Floor float64
}

// NewDecay checks the schedule: 0 < Floor ≤ Start and 0 < Rate ≤ 1.
func NewDecay(start, rate, floor float64) (Decay, error) {
	switch {
	case !(floor > 0) || math.IsInf(floor, 0):
		return Decay{}, fmt.Errorf("alpha floor %v, want > 0", floor)
	case !(start >= floor) || math.IsInf(start, 0):
		return Decay{}, fmt.Errorf("alpha start %v, want ≥ the floor alpha %v", start, floor)
	case !(rate > 0 && rate <= 1):
		return Decay{}, fmt.Errorf("alpha decay %v, want in (0, 1]", rate)
	}
	return Decay{Start: start, Rate: rate, Floor: floor}, nil
}

// Alpha returns max(Start · Rate^(it/100), Floor).
func (d Decay) Alpha(it int, _ Stats) float64 {
	return math.Max(d.Start*math.Pow(d.Rate, float64(it)/100), d.Floor)
}
