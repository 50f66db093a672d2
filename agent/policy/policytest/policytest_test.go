package policytest

import (
	"math"
	"testing"
)

// The definitions against the verified vectors of the reference notes (sparse_math.md §1.5) and
// the identities that tie them together: entmax at q = 2 is sparsemax, and softmax sums to one
// with log p = z − lse.
func TestDefinitions(t *testing.T) {
	for _, tc := range []struct {
		z, p     []float64
		g, spmax float64
	}{
		{[]float64{0, 0.5, 1}, []float64{0, 0.25, 0.75}, 0.25, 1.0625},
		{[]float64{0.1, 0.2, 0.3, 0.4, 0.5}, []float64{0, 0.1, 0.2, 0.3, 0.4}, 0.1, 0.75},
		{[]float64{0.175, 0, -2}, []float64{0.5875, 0.4125, 0}, -0.4125, 0.345156},
	} {
		p, g := Sparsemax(tc.z)
		if math.Abs(g-tc.g) > 1e-12 {
			t.Errorf("G(%v) = %v, want %v", tc.z, g, tc.g)
		}
		for i := range p {
			if math.Abs(p[i]-tc.p[i]) > 1e-12 {
				t.Errorf("sparsemax(%v) = %v, want %v", tc.z, p, tc.p)
				break
			}
		}
		if got := Spmax(tc.z); math.Abs(got-tc.spmax) > 1e-6 {
			t.Errorf("spmax(%v) = %v, want %v", tc.z, got, tc.spmax)
		}
		for i, e := range Entmax(tc.z, 2) {
			if math.Abs(e-p[i]) > 1e-9 {
				t.Errorf("entmax_2(%v) = %v, want sparsemax's %v", tc.z, Entmax(tc.z, 2), p)
				break
			}
		}
		sp, lse := Softmax(tc.z)
		sum := 0.0
		for i, x := range sp {
			sum += x
			if math.Abs(math.Log(x)-(tc.z[i]-lse)) > 1e-12 {
				t.Errorf("log softmax(%v)[%d] = %v, want z − lse = %v", tc.z, i, math.Log(x), tc.z[i]-lse)
			}
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("softmax(%v) sums to %v", tc.z, sum)
		}
	}
}
