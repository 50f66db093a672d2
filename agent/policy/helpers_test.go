package policy

import (
	"math"
	"math/rand/v2"
	"testing"
)

var allAlgorithms = []Algorithm{Auto, Sort, Pivot, Condat, Bisect}

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

func randomLogits(rng *rand.Rand, k int, scale float64) []float64 {
	z := make([]float64, k)
	for i := range z {
		z[i] = scale * rng.NormFloat64()
	}
	return z
}

// centralDiff returns the finite-difference gradient of f at z.
func centralDiff(f func([]float64) float64, z []float64, h float64) []float64 {
	g := make([]float64, len(z))
	x := append([]float64(nil), z...)
	for i := range z {
		x[i] = z[i] + h
		fp := f(x)
		x[i] = z[i] - h
		fm := f(x)
		x[i] = z[i]
		g[i] = (fp - fm) / (2 * h)
	}
	return g
}

func maxAbsDiff(a, b []float64) float64 {
	var m float64
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}

func assertClose(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: length %d, want %d", what, len(got), len(want))
	}
	if d := maxAbsDiff(got, want); !(d <= tol) {
		t.Fatalf("%s: got %v, want %v (max diff %g > %g)", what, got, want, d, tol)
	}
}

func assertSimplex(t *testing.T, what string, p []float64, tol float64) {
	t.Helper()
	var s float64
	for i, v := range p {
		if !(v >= 0) {
			t.Fatalf("%s: p[%d] = %v is not >= 0 (p = %v)", what, i, v, p)
		}
		s += v
	}
	if math.Abs(s-1) > tol {
		t.Fatalf("%s: sum p = %.17g, want 1 (p = %v)", what, s, p)
	}
}

// awayFromKinks reports whether every entry is at least gap away from the
// threshold tau (entmax coordinates: (alpha-1) z_i vs tau).
func awayFromKinks(z []float64, alpha, tau, gap float64) bool {
	for _, v := range z {
		if math.Abs((alpha-1)*v-tau) < gap {
			return false
		}
	}
	return true
}

func sparsemaxF64(z []float64) ([]float64, float64, int) {
	p := make([]float64, len(z))
	tau, k := SparsemaxWith(Sort, p, z, nil)
	return p, tau, k
}
