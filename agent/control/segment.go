package control

import "github.com/sparsepcl/sparsepcl/agent/episode"

// Segment is a sub-episode of encoded (unnormalised) observation vectors, (L+1) x Dim values: the
// sampler cuts one at the end of an iteration, a truncation or a termination, and an episode that
// starts in the middle of an iteration starts a new one.
type Segment = episode.Trajectory[float32]

// fillReturnsToGo sets ReturnToGo on each segment of one episode, given in order, with discount gamma.
func fillReturnsToGo(segs []*Segment, gamma float64) {
	g := 0.0
	for i := len(segs) - 1; i >= 0; i-- {
		s := segs[i]
		s.ReturnToGo = make([]float64, s.Len())
		for t := s.Len() - 1; t >= 0; t-- {
			g = s.Rewards[t] + gamma*g
			s.ReturnToGo[t] = g
		}
	}
}
