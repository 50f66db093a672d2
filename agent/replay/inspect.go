package replay

import "github.com/sparsepcl/sparsepcl/agent/episode"

// Count returns how many stored episodes satisfy keep (for instrumentation: e.g. how many
// rewarded episodes the buffer holds). keep sees them in storage order, the order of
// Probabilities.
func (b *Buffer) Count(keep func(*episode.Episode) bool) int {
	n := 0
	for _, e := range b.eps {
		if keep(e) {
			n++
		}
	}
	return n
}
