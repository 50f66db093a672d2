package control

import "fmt"

// Segment is a sub-episode: L consecutive steps of one copy within one episode, with the L+1
// encoded (unnormalised) observations around them. It is cut by the end of an iteration, a
// truncation or a termination; only a terminated segment does not bootstrap from V at its last
// state. An episode that starts in the middle of an iteration starts a new segment.
type Segment struct {
	Obs        []float32 // (L+1) x Dim
	Actions    []int32
	Rewards    []float64
	Terminated bool
	// Truncated marks a segment that ends its episode without termination (a time limit); a
	// segment that is neither was cut by the iteration and its episode goes on.
	Truncated bool
	Iteration int // the training iteration that collected it (the recency priority)
	// ReturnToGo[t] is the discounted return from state t to the end of the segment's episode,
	// filled in when the episode ends (nil before, and for an episode a resume cut short). It is
	// a diagnostic only: the critic's target scale.
	ReturnToGo []float64
}

// Len is the number of steps L.
func (s *Segment) Len() int { return len(s.Actions) }

// Validate checks the shape invariants for observation vectors of dim.
func (s *Segment) Validate(dim int) error {
	L := len(s.Actions)
	if L < 1 {
		return fmt.Errorf("control: segment has no steps")
	}
	if len(s.Obs) != (L+1)*dim || len(s.Rewards) != L {
		return fmt.Errorf("control: segment of %d steps needs %d observation values and %d rewards, has %d and %d", L, (L+1)*dim, L, len(s.Obs), len(s.Rewards))
	}
	if s.ReturnToGo != nil && len(s.ReturnToGo) != L {
		return fmt.Errorf("control: segment of %d steps has %d returns to go", L, len(s.ReturnToGo))
	}
	if s.Terminated && s.Truncated {
		return fmt.Errorf("control: segment is both terminated and truncated")
	}
	return nil
}

// fillReturnsToGo sets ReturnToGo on each segment of one episode, given in order, with discount gamma.
func fillReturnsToGo(episode []*Segment, gamma float64) {
	g := 0.0
	for i := len(episode) - 1; i >= 0; i-- {
		s := episode[i]
		s.ReturnToGo = make([]float64, s.Len())
		for t := s.Len() - 1; t >= 0; t-- {
			g = s.Rewards[t] + gamma*g
			s.ReturnToGo[t] = g
		}
	}
}
