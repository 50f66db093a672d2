package nn

import "github.com/sparsepcl/sparsepcl/agent/tensor"

// Param is one trainable matrix, its gradient of the same shape, and a
// stable name (used by checkpoints and in error messages).
type Param struct {
	Name  string
	Value *tensor.Matrix
	Grad  *tensor.Matrix
}

// NewParam returns a zero-valued rows x cols parameter with a zero gradient.
func NewParam(name string, rows, cols int) *Param {
	return &Param{Name: name, Value: tensor.New(rows, cols), Grad: tensor.New(rows, cols)}
}

// ZeroGrads clears the gradients of ps.
func ZeroGrads(ps []*Param) {
	for _, p := range ps {
		p.Grad.Zero()
	}
}
