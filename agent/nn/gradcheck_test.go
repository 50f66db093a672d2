package nn_test

import (
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/nn/nntest"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Finite-difference checks of the layers' gradients, element by element (nntest.Problem).
func linearProblem(t *testing.T, bias bool) nntest.Problem {
	eng := tensor.GonumEngine()
	rng := nn.NewRand(3, 0)
	l, err := nn.NewLinear(eng, "lin", 5, 4, bias, rng)
	if err != nil {
		t.Fatal(err)
	}
	if bias {
		nntest.RandFill(l.B.Value, rng, 0.5)
	}
	x := nntest.InputParam("x", nntest.RandFill(tensor.New(6, 5), rng, 1))
	r := nntest.RandFill(tensor.New(6, 4), rng, 1)
	return nntest.Problem{
		Params: append(l.Params(), x),
		Loss: func() (float64, error) {
			y, err := l.Forward(x.Value)
			if err != nil {
				return 0, err
			}
			return nntest.WeightedSum(y, r), nil
		},
		Backward: func() error { return l.Backward(r, x.Grad, true) },
	}
}

// rowScaledProblem is linearProblem with the loss's weights R given as a row-scaled gradient
// diag(s)·E, passed through BackwardRowScaled.
func rowScaledProblem(t *testing.T, bias bool) nntest.Problem {
	eng := tensor.GonumEngine()
	rng := nn.NewRand(3, 1)
	l, err := nn.NewLinear(eng, "lin", 5, 4, bias, rng)
	if err != nil {
		t.Fatal(err)
	}
	if bias {
		nntest.RandFill(l.B.Value, rng, 0.5)
	}
	x := nntest.InputParam("x", nntest.RandFill(tensor.New(6, 5), rng, 1))
	e := nntest.RandFill(tensor.New(6, 4), rng, 1)
	var s nn.RowScaled
	s.Reset(6)
	r := tensor.New(6, 4)
	for i := range 6 {
		s.Scale[i] = float32(rng.NormFloat64())
		for j := range 4 {
			r.Data[i*4+j] = s.Scale[i] * e.Data[i*4+j]
		}
	}
	return nntest.Problem{
		Params: append(l.Params(), x),
		Loss: func() (float64, error) {
			y, err := l.Forward(x.Value)
			if err != nil {
				return 0, err
			}
			return nntest.WeightedSum(y, r), nil
		},
		Backward: func() error { return l.BackwardRowScaled(e, &s, x.Grad, true) },
	}
}

func mlpProblem(t *testing.T, bias bool) nntest.Problem {
	eng := tensor.GonumEngine()
	rng := nn.NewRand(6, 0)
	m, err := nn.NewMLP(eng, "mlp", []int{4, 7, 5, 3}, bias, rng)
	if err != nil {
		t.Fatal(err)
	}
	x := nntest.InputParam("x", nntest.RandFill(tensor.New(6, 4), rng, 1))
	r := nntest.RandFill(tensor.New(6, 3), rng, 1)
	return nntest.Problem{
		Params: append(m.Params(), x),
		Loss: func() (float64, error) {
			y, err := m.Forward(x.Value)
			if err != nil {
				return 0, err
			}
			return nntest.WeightedSum(y, r), nil
		},
		Backward: func() error {
			dx, err := m.Backward(r)
			if err != nil {
				return err
			}
			return x.Grad.CopyFrom(dx)
		},
	}
}

func TestGradCheck(t *testing.T) {
	cases := []struct {
		name string
		make func(t *testing.T) nntest.Problem
	}{
		{"linear-bias", func(t *testing.T) nntest.Problem { return linearProblem(t, true) }},
		{"linear-nobias", func(t *testing.T) nntest.Problem { return linearProblem(t, false) }},
		{"linear-row-scaled-bias", func(t *testing.T) nntest.Problem { return rowScaledProblem(t, true) }},
		{"linear-row-scaled-nobias", func(t *testing.T) nntest.Problem { return rowScaledProblem(t, false) }},
		{"mlp-tanh-bias", func(t *testing.T) nntest.Problem { return mlpProblem(t, true) }},
		{"mlp-tanh-nobias", func(t *testing.T) nntest.Problem { return mlpProblem(t, false) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { nntest.CheckGradients(t, tc.make(t)) })
	}
}
