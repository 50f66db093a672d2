package mlp

import "github.com/sparsepcl/sparsepcl/agent/episode"

// Segment is a sub-episode of encoded (unnormalised) observation vectors, (L+1) x Dim values: the
// collector cuts one at the end of an iteration, a truncation or a termination, and an episode that
// starts in the middle of an iteration starts a new one.
type Segment = episode.Trajectory[float32]
