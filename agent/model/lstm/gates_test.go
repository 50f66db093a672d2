package lstm

import (
	"math"
	"testing"
)

// The gate functions are the float64 functions up to float32 rounding, and sigmoid32 stays
// finite far out.
func TestGateAccuracy(t *testing.T) {
	cases := []struct {
		name           string
		f              func(float32) float32
		ref            func(float64) float64
		lo, hi         float64
		relTol, absTol float64
	}{
		{"sigmoid", sigmoid32, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, -30, 30, 5e-7, 1e-12},
		{"tanh", tanh32, math.Tanh, -20, 20, 1e-6, 1e-7},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const n = 200001
			for i := 0; i < n; i++ {
				x32 := float32(tc.lo + (tc.hi-tc.lo)*float64(i)/(n-1))
				got, want := float64(tc.f(x32)), tc.ref(float64(x32))
				if d := math.Abs(got - want); d > tc.relTol*math.Abs(want)+tc.absTol {
					t.Fatalf("%s(%v) = %v, want %v (diff %g)", tc.name, x32, got, want, d)
				}
			}
		})
	}
	if v := sigmoid32(-1000); v != 0 && v > 1e-37 {
		t.Fatalf("sigmoid32(-1000) = %v", v)
	}
}
