package collect

import (
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/episode"
)

// The returns to go run over the whole episode, across the sub-episodes it was cut into.
func TestFillReturnsToGo(t *testing.T) {
	a := &episode.Trajectory[float32]{Rewards: []float64{1, 2}, Actions: make([]int32, 2)}
	b := &episode.Trajectory[float32]{Rewards: []float64{3}, Actions: make([]int32, 1)}
	FillReturnsToGo([][]*episode.Trajectory[float32]{{a, b}}, 0.5)
	// G2 = 3, G1 = 2 + 0.5*3 = 3.5, G0 = 1 + 0.5*3.5 = 2.75.
	if a.ReturnToGo[0] != 2.75 || a.ReturnToGo[1] != 3.5 || b.ReturnToGo[0] != 3 {
		t.Errorf("returns to go %v %v", a.ReturnToGo, b.ReturnToGo)
	}
}
