package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

func TestFastMathAccuracy(t *testing.T) {
	cases := []struct {
		name   string
		f      func(float32) float32
		ref    func(float64) float64
		lo, hi float64
		relTol float64
		absTol float64
	}{
		{"exp", exp32, math.Exp, -80, 80, 5e-7, 0},
		{"tanh", tanh32, math.Tanh, -20, 20, 1e-6, 1e-7},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const n = 200001
			for i := 0; i < n; i++ {
				x := tc.lo + (tc.hi-tc.lo)*float64(i)/(n-1)
				x32 := float32(x)
				got, want := float64(tc.f(x32)), tc.ref(float64(x32))
				if d := math.Abs(got - want); d > tc.relTol*math.Abs(want)+tc.absTol {
					t.Fatalf("%s(%v) = %v, want %v (diff %g)", tc.name, x32, got, want, d)
				}
			}
		})
	}
	if v := exp32(1000); math.IsInf(float64(v), 0) || math.IsNaN(float64(v)) {
		t.Fatalf("exp32 overflow not clamped: %v", v)
	}
}

// TanhInto (vectorised when built with cgo) is Tanh32 up to float32 rounding.
func TestTanhIntoMatchesTanh32(t *testing.T) {
	var src []float32
	for x := float32(-12); x <= 12; x += 0.00731 {
		src = append(src, x)
	}
	src = append(src, 0, 1e-8, -1e-8, 0.125, -0.125, 0.12499, 100, -100)
	dst := make([]float32, len(src))
	TanhInto(dst, src)
	for i, x := range src {
		want := tanh32(x)
		if d := math.Abs(float64(dst[i] - want)); d > 2e-7*math.Max(1e-3, math.Abs(float64(want))) {
			t.Errorf("tanh(%v): %v, tanh32 %v", x, dst[i], want)
		}
	}
}

// TanhBackward writes tanhBackwardGo's bits: lengths around the vector widths, outputs across
// (-1, 1) and at its ends, gradients of every scale.
func TestTanhBackwardMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 13))
	for _, n := range []int{0, 1, 7, 8, 9, 16, 31, 33, 1000} {
		a, d := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i] = []float32{-1, 1, 0, 1e-20, float32(2*rng.Float64() - 1)}[rng.IntN(5)]
			d[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(13)-6)))
		}
		want := append([]float32(nil), d...)
		tanhBackwardGo(want, a)
		TanhBackward(d, a)
		for i := range d {
			if math.Float32bits(d[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n %d, entry %d (a %v): %v, Go %v", n, i, a[i], d[i], want[i])
			}
		}
	}
}

// BackwardParams leaves the parameter gradients Backward leaves, bit for bit, without dL/dx.
func TestMLPBackwardParams(t *testing.T) {
	eng, err := tensor.NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	x, dy := tensor.New(37, 5), tensor.New(37, 1)
	for _, m := range []*tensor.Matrix{x, dy} {
		for i := range m.Data {
			m.Data[i] = float32(rng.NormFloat64())
		}
	}
	grads := func(params bool) [][]float32 {
		m, err := NewMLP(eng, "v", []int{5, 16, 16, 1}, true, NewRand(3, 12))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Forward(x); err != nil {
			t.Fatal(err)
		}
		if params {
			err = m.BackwardParams(dy)
		} else {
			_, err = m.Backward(dy)
		}
		if err != nil {
			t.Fatal(err)
		}
		var out [][]float32
		for _, p := range m.Params() {
			out = append(out, p.Grad.Data)
		}
		return out
	}
	full, params := grads(false), grads(true)
	for i := range full {
		for k := range full[i] {
			if math.Float32bits(full[i][k]) != math.Float32bits(params[i][k]) {
				t.Fatalf("parameter %d entry %d: %v, Backward's %v", i, k, params[i][k], full[i][k])
			}
		}
	}
}
