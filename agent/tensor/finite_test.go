package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// firstNonFinite finds the first NaN or infinity wherever it lies (inside a block of 64, at its
// edges, in the tail), finds none in finite data (subnormals and the largest float included), and
// agrees with the Go loop.
func TestFirstNonFinite(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	bad := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}
	for _, n := range []int{0, 1, 63, 64, 65, 128, 200} {
		x := make([]float32, n)
		for i := range x {
			x[i] = []float32{0, -0.5, 1e-42, math.MaxFloat32, -math.MaxFloat32, float32(rng.NormFloat64())}[rng.IntN(6)]
		}
		if got := firstNonFinite(x); got != -1 {
			t.Fatalf("n %d, finite data: %d, want -1", n, got)
		}
		for _, at := range []int{0, 1, 62, 63, 64, 100, n - 1} {
			if at < 0 || at >= n {
				continue
			}
			for _, b := range bad {
				y := append([]float32(nil), x...)
				y[at] = b
				if later := at + 1 + rng.IntN(n-at); later < n {
					y[later] = float32(math.NaN()) // a second one after it does not count
				}
				if got, want := firstNonFinite(y), firstNonFiniteGo(y); got != at || want != at {
					t.Errorf("n %d, %v at %d: kernel %d, Go %d", n, b, at, got, want)
				}
			}
		}
	}
}
