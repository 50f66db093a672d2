package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// TestBiasKernelsMatchLoops requires AddRowVector and AddColumnSums (vectorised) to give the bits
// of the plain loops, each column summed in row order, at sizes around the vector widths.
func TestBiasKernelsMatchLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, rows := range []int{0, 1, 3, 17, 101} {
		for _, cols := range []int{1, 7, 8, 9, 31, 64, 65, 729} {
			m := tensor.New(rows, cols)
			v := make([]float32, cols)
			for i := range m.Data {
				m.Data[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(7)-3)))
			}
			for i := range v {
				v[i] = float32(rng.NormFloat64())
			}
			want := append([]float32(nil), m.Data...)
			for r := range rows {
				for j := range cols {
					want[r*cols+j] += v[j]
				}
			}
			sums := append([]float32(nil), v...)
			wantSums := append([]float32(nil), v...)
			for r := range rows {
				for j := range cols {
					wantSums[j] += m.Data[r*cols+j]
				}
			}
			AddColumnSums(sums, m)
			AddRowVector(m, v)
			for i := range want {
				if math.Float32bits(m.Data[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%dx%d: AddRowVector entry %d is %v, want %v", rows, cols, i, m.Data[i], want[i])
				}
			}
			for j := range wantSums {
				if math.Float32bits(sums[j]) != math.Float32bits(wantSums[j]) {
					t.Fatalf("%dx%d: AddColumnSums column %d is %v, want %v", rows, cols, j, sums[j], wantSums[j])
				}
			}
		}
	}
}
