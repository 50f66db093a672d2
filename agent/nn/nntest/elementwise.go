package nntest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Element-wise finite-difference gradient checks of a layer or network, in float32.
//
// The loss is L = Σ R⊙out with fixed random R (accumulated in float64, WeightedSum), so
// dL/dout = R is what Backward receives. Numeric gradients are central differences
// (L(θ+ε) - L(θ-ε)) / 2ε with ε = 3e-3:
//   - truncation error is ε²/6·|L”'|, about 1e-6 relative here;
//   - float32 rounding of the forward pass perturbs L by ~1e-7·Σ|R⊙out|,
//     i.e. ~1e-7·10 / 6e-3 ≈ 2e-4 absolute on a numeric gradient at most.
//
// Hence the per-element test |num-ana| <= 1e-3 + 1e-2·|ana|, plus a per-parameter aggregate
// ‖num-ana‖ / ‖ana‖ <= 1e-2. A factor-of-two or sign error fails both by two orders of
// magnitude; the recurrent network's tests (agent/model/lstm) show that the check rejects a
// gradient with one element off by 5% or one parameter scaled by 1.05.
const (
	fdEps    = 3e-3
	fdAbsTol = 1e-3
	fdRelTol = 1e-2
	fdAggTol = 1e-2
	// MaxElems is the number of elements of a parameter CheckGradients checks, chosen at random
	// when it has more.
	MaxElems = 40
)

// Problem is a gradient to check: Loss computes L at the current values of Params, Backward
// fills the Grad of every entry of Params for the last Loss.
type Problem struct {
	Params   []*nn.Param // includes pseudo-params for inputs (Grad = dL/dinput, InputParam)
	Loss     func() (float64, error)
	Backward func() error
}

// WeightedSum returns Σ R⊙m in float64.
func WeightedSum(m, r *tensor.Matrix) float64 {
	var s float64
	for i, v := range m.Data {
		s += float64(v) * float64(r.Data[i])
	}
	return s
}

// RandFill fills m with normal values of std scale and returns it.
func RandFill(m *tensor.Matrix, rng *rand.Rand, scale float64) *tensor.Matrix {
	for i := range m.Data {
		m.Data[i] = float32(rng.NormFloat64() * scale)
	}
	return m
}

// InputParam wraps an input matrix as a pseudo-parameter so its gradient is checked too.
func InputParam(name string, x *tensor.Matrix) *nn.Param {
	return &nn.Param{Name: name, Value: x, Grad: tensor.New(x.Rows, x.Cols)}
}

// AnalyticGrads runs Loss and Backward and returns copies of every gradient.
func AnalyticGrads(p Problem) ([]*tensor.Matrix, error) {
	for _, q := range p.Params {
		q.Grad.Zero()
	}
	if _, err := p.Loss(); err != nil {
		return nil, err
	}
	if err := p.Backward(); err != nil {
		return nil, err
	}
	var gs []*tensor.Matrix
	for _, q := range p.Params {
		gs = append(gs, q.Grad.Clone())
	}
	return gs, nil
}

// CompareGrads checks the analytic gradients ana (one per param) against central differences
// on at most maxElems elements of each parameter (chosen from seed) and returns a description
// of every failure.
func CompareGrads(p Problem, ana []*tensor.Matrix, seed uint64, maxElems int) ([]string, error) {
	rng := rand.New(rand.NewPCG(seed, 99))
	var fails []string
	for pi, q := range p.Params {
		n := len(q.Value.Data)
		idx := rng.Perm(n)
		if n > maxElems {
			idx = idx[:maxElems]
		}
		var diff2, ana2 float64
		for _, k := range idx {
			num, err := centralDifference(p, q, k)
			if err != nil {
				return nil, err
			}
			a := float64(ana[pi].Data[k])
			diff2 += (num - a) * (num - a)
			ana2 += a * a
			if math.Abs(num-a) > fdAbsTol+fdRelTol*math.Abs(a) {
				fails = append(fails, fmt.Sprintf("%s[%d]: numeric %.6g analytic %.6g", q.Name, k, num, a))
			}
		}
		if ana2 > 0 && math.Sqrt(diff2/ana2) > fdAggTol {
			fails = append(fails, fmt.Sprintf("%s: aggregate relative error %.3g", q.Name, math.Sqrt(diff2/ana2)))
		}
		if ana2 == 0 && diff2 > fdAbsTol*fdAbsTol {
			fails = append(fails, fmt.Sprintf("%s: analytic gradient is zero but numeric is not", q.Name))
		}
	}
	return fails, nil
}

// centralDifference is the numeric derivative of p's loss along element k of q.
func centralDifference(p Problem, q *nn.Param, k int) (float64, error) {
	orig := q.Value.Data[k]
	q.Value.Data[k] = orig + fdEps
	lp, err := p.Loss()
	if err != nil {
		return 0, err
	}
	q.Value.Data[k] = orig - fdEps
	lm, err := p.Loss()
	if err != nil {
		return 0, err
	}
	q.Value.Data[k] = orig
	// The perturbation actually applied is the float32 difference.
	h := float64(orig+fdEps) - float64(orig-fdEps)
	return (lp - lm) / h, nil
}

// CheckGradients fails t unless p's analytic gradients, not all zero, pass CompareGrads on
// MaxElems elements of each parameter.
func CheckGradients(t *testing.T, p Problem) {
	t.Helper()
	ana, err := AnalyticGrads(p)
	if err != nil {
		t.Fatal(err)
	}
	nonzero := false
	for _, g := range ana {
		nonzero = nonzero || g.SumSquares() > 0
	}
	if !nonzero {
		t.Fatal("all analytic gradients are zero: the check would be vacuous")
	}
	fails, err := CompareGrads(p, ana, 7, MaxElems)
	if err != nil {
		t.Fatal(err)
	}
	if len(fails) > 0 {
		t.Fatalf("%d gradient mismatches:\n%s", len(fails), strings.Join(fails[:min(len(fails), 20)], "\n"))
	}
}
