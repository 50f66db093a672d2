package nn

import (
	"math"
	"testing"
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
		{"sigmoid", sigmoid32, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, -30, 30, 5e-7, 1e-12},
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
	if v := sigmoid32(-1000); v != 0 && v > 1e-37 {
		t.Fatalf("sigmoid32(-1000) = %v", v)
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
