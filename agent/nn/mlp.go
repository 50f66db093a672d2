package nn

import (
	"fmt"
	"math/rand/v2"

	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// MLP is a stack of Linear layers with tanh between them and a linear
// output: sizes {in, 64, 64, out} is the HalfCheetah network.
type MLP struct {
	Layers []*Linear
	acts   []*tensor.Matrix // tanh outputs of the hidden layers
	dBuf   []*tensor.Matrix // gradients w.r.t. the hidden activations
	dx     *tensor.Matrix
}

// NewMLP returns an MLP with layer sizes sizes[0] -> ... -> sizes[n-1];
// bias selects biases on every layer (the reference MuJoCo value net has none).
func NewMLP(eng *tensor.Engine, name string, sizes []int, bias bool, rng *rand.Rand) (*MLP, error) {
	if len(sizes) < 2 {
		return nil, fmt.Errorf("nn: mlp %q: need at least input and output sizes, got %v", name, sizes)
	}
	m := &MLP{dx: tensor.New(0, sizes[0])}
	for i := 0; i+1 < len(sizes); i++ {
		l, err := NewLinear(eng, fmt.Sprintf("%s.l%d", name, i), sizes[i], sizes[i+1], bias, rng)
		if err != nil {
			return nil, err
		}
		m.Layers = append(m.Layers, l)
		if i+2 < len(sizes) {
			m.acts = append(m.acts, tensor.New(0, sizes[i+1]))
			m.dBuf = append(m.dBuf, tensor.New(0, sizes[i+1]))
		}
	}
	return m, nil
}

// Params returns every layer's parameters in order.
func (m *MLP) Params() []*Param {
	var ps []*Param
	for _, l := range m.Layers {
		ps = append(ps, l.Params()...)
	}
	return ps
}

// Forward returns the output (owned by m) for x (rows x sizes[0]).
func (m *MLP) Forward(x *tensor.Matrix) (*tensor.Matrix, error) {
	h := x
	for i, l := range m.Layers {
		y, err := l.Forward(h)
		if err != nil {
			return nil, err
		}
		if i == len(m.Layers)-1 {
			return y, nil
		}
		a := m.acts[i]
		a.Reshape(y.Rows, y.Cols)
		TanhInto(a.Data, y.Data)
		h = a
	}
	panic("unreachable")
}

// Backward accumulates parameter gradients for output gradient dy and
// returns dL/dx (owned by m).
func (m *MLP) Backward(dy *tensor.Matrix) (*tensor.Matrix, error) {
	if err := m.backward(dy, true); err != nil {
		return nil, err
	}
	return m.dx, nil
}

// BackwardParams is Backward without dL/dx, for a network whose input needs no gradient (an
// observation): the first layer's input product is not computed. The parameter gradients are
// Backward's, bit for bit.
func (m *MLP) BackwardParams(dy *tensor.Matrix) error { return m.backward(dy, false) }

func (m *MLP) backward(dy *tensor.Matrix, withDx bool) error {
	d := dy
	for i := len(m.Layers) - 1; i >= 0; i-- {
		l := m.Layers[i]
		if i == 0 {
			if l.x == nil {
				return fmt.Errorf("nn: mlp %s: Backward before Forward", l.W.Name)
			}
			var dx *tensor.Matrix
			if withDx {
				m.dx.Reshape(l.x.Rows, l.In)
				dx = m.dx
			}
			return l.Backward(d, dx, false)
		}
		db := m.dBuf[i-1]
		db.Reshape(d.Rows, l.In)
		if err := l.Backward(d, db, false); err != nil {
			return err
		}
		TanhBackward(db.Data, m.acts[i-1].Data)
		d = db
	}
	panic("unreachable")
}
