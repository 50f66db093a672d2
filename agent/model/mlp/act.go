package mlp

import (
	"fmt"

	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Begin does nothing: the feed-forward networks carry nothing from step to step (collect.Actor).
func (m *Model) Begin([]bool) {}

// Act computes the heads of the copies' encoded observations obs (rows x Dim), normalised when
// the model normalises, and returns head 0 (collect.Actor). The previous actions are not read.
func (m *Model) Act(obs []float32, _ []int32) (*tensor.Matrix, error) {
	if len(obs)%m.Dim != 0 {
		return nil, fmt.Errorf("mlp: %d observation values are not rows of %d", len(obs), m.Dim)
	}
	if m.actX == nil {
		m.actX = tensor.New(0, m.Dim)
	}
	m.Input(m.actX, obs)
	heads, err := m.Forward(m.actX)
	if err != nil {
		return nil, err
	}
	return heads[0], nil
}
