package optim

import (
	"math"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/nn"
)

// quadratic is f(w) = Σ_k a_k (w_k - c_k)² with its minimum at c: each optimiser must reach it.
type quadratic struct{ a, c []float32 }

func (q quadratic) grad(p *nn.Param) {
	for k, w := range p.Value.Data {
		p.Grad.Data[k] = 2 * q.a[k] * (w - q.c[k])
	}
}

func TestOptimisersReachTheMinimumOfAQuadratic(t *testing.T) {
	q := quadratic{a: []float32{0.5, 2, 8, 1}, c: []float32{1, -2, 0.5, 3}}
	for _, tc := range []struct {
		name  string
		lr    float64
		steps int
	}{{NameSGD, 0.05, 500}, {NameAdam, 0.05, 2000}, {NameRMSProp, 0.01, 3000}} {
		p := nn.NewParam("w", 1, len(q.c))
		opt, err := New(tc.name, []*nn.Param{p}, AdamConfig{LearningRate: tc.lr, Epsilon: 1e-8})
		if err != nil {
			t.Fatal(err)
		}
		for range tc.steps {
			q.grad(p)
			if err := opt.Step(); err != nil {
				t.Fatal(err)
			}
		}
		for k, w := range p.Value.Data {
			// SGD converges exactly; Adam and RMSProp hover within about lr of the minimum.
			if d := math.Abs(float64(w - q.c[k])); d > 2*tc.lr {
				t.Errorf("%s: w[%d] = %v, minimum at %v", tc.name, k, w, q.c[k])
			}
		}
	}
}

// One SGD step is w - lr·g; one RMSProp step from zero state is w - lr·g/(sqrt(0.1 g²) + ε).
func TestSGDAndRMSPropFirstStep(t *testing.T) {
	for _, name := range []string{NameSGD, NameRMSProp} {
		p := nn.NewParam("w", 1, 2)
		copy(p.Value.Data, []float32{1, -1})
		copy(p.Grad.Data, []float32{0.5, -2})
		opt, err := New(name, []*nn.Param{p}, AdamConfig{LearningRate: 0.1, Epsilon: 1e-6})
		if err != nil {
			t.Fatal(err)
		}
		if err := opt.Step(); err != nil {
			t.Fatal(err)
		}
		for k, g := range []float64{0.5, -2} {
			step := 0.1 * g
			if name == NameRMSProp {
				step = 0.1 * g / (math.Sqrt((1-RMSPropDecay)*g*g) + 1e-6)
			}
			want := []float64{1, -1}[k] - step
			if math.Abs(float64(p.Value.Data[k])-want) > 1e-6 {
				t.Errorf("%s: w[%d] = %v, want %v", name, k, p.Value.Data[k], want)
			}
		}
	}
}

func TestOptimiserErrors(t *testing.T) {
	p := nn.NewParam("w", 1, 2)
	if _, err := New("lbfgs", []*nn.Param{p}, AdamConfig{LearningRate: 0.1}); err == nil || !strings.Contains(err.Error(), "unknown optimiser") {
		t.Errorf("unknown name: %v", err)
	}
	for _, name := range []string{NameSGD, NameRMSProp} {
		if _, err := New(name, []*nn.Param{p}, AdamConfig{LearningRate: 0, Epsilon: 1e-8}); err == nil {
			t.Errorf("%s with lr 0: no error", name)
		}
		if _, err := New(name, []*nn.Param{p, p}, AdamConfig{LearningRate: 0.1, Epsilon: 1e-8}); err == nil {
			t.Errorf("%s with a duplicate parameter: no error", name)
		}
		opt, err := New(name, []*nn.Param{p}, AdamConfig{LearningRate: 0.1, Epsilon: 1e-8})
		if err != nil {
			t.Fatal(err)
		}
		before := append([]float32(nil), p.Value.Data...)
		p.Grad.Data[1] = float32(math.NaN())
		if err := opt.Step(); err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("%s: a NaN gradient: %v", name, err)
		}
		if p.Value.Data[0] != before[0] || p.Value.Data[1] != before[1] {
			t.Errorf("%s: a refused step changed the parameters", name)
		}
		p.Grad.Data[1] = 0
	}
}
