package nn_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// A layer large enough to fold its bias into the products (rows x Out >= 2^20) computes the
// products of the definition (checked in float64), and its sparse backward pass, split over
// goroutines, gives the dense pass's gradients and the same bits whatever the worker count.
func TestLargeLinearFoldedBiasAndParallelSparseBackward(t *testing.T) {
	const rows, in, out = 300, 6, 4096
	rng := rand.New(rand.NewPCG(8, 9))
	l, err := nn.NewLinear(tensor.GonumEngine(), "big", in, out, true, rng)
	if err != nil {
		t.Fatal(err)
	}
	for i := range l.B.Value.Data {
		l.B.Value.Data[i] = float32(rng.NormFloat64())
	}
	x := randMatrix(rng, rows, in)
	y, err := l.Forward(x)
	if err != nil {
		t.Fatal(err)
	}
	near := func(name string, got float32, want float64) {
		t.Helper()
		if math.Abs(float64(got)-want) > 1e-5*(1+math.Abs(want)) {
			t.Fatalf("%s: %v, want %v", name, got, want)
		}
	}
	for r := 0; r < rows; r += 37 {
		for j := 0; j < out; j += 101 {
			want := float64(l.B.Value.Data[j])
			for k := range in {
				want += float64(x.At(r, k)) * float64(l.W.Value.At(k, j))
			}
			near("y", y.At(r, j), want)
		}
	}
	// A sparse dy with enough entries to take the parallel pass.
	var dy nn.SparseRows
	dy.Reset(out)
	for range rows {
		for e := 0; e < 40; e++ {
			dy.Add(rng.IntN(out), float32(rng.NormFloat64()))
		}
		dy.EndRow()
	}
	dense := tensor.New(rows, out)
	if err := dy.ToDense(dense); err != nil {
		t.Fatal(err)
	}
	grads := func(run func(dx *tensor.Matrix) error) [][]float32 {
		l.W.Grad.Zero()
		l.B.Grad.Zero()
		dx := tensor.New(rows, in)
		if err := run(dx); err != nil {
			t.Fatal(err)
		}
		return [][]float32{slices.Clone(l.W.Grad.Data), slices.Clone(l.B.Grad.Data), dx.Data}
	}
	want := grads(func(dx *tensor.Matrix) error { return l.Backward(dense, dx, false) })
	for k := 0; k < in; k++ {
		for j := 0; j < out; j += 97 {
			var s, sb float64
			for r := range rows {
				s += float64(x.At(r, k)) * float64(dense.At(r, j))
				sb += float64(dense.At(r, j))
			}
			near("dW", want[0][k*out+j], s)
			near("db", want[1][j], sb)
		}
	}
	var first [][]float32
	for _, workers := range []int{1, 2, 5} {
		l.Workers = workers
		got := grads(func(dx *tensor.Matrix) error { return l.BackwardSparse(&dy, dx, false) })
		for i := range got {
			for e := range got[i] {
				near("sparse pass", got[i][e], float64(want[i][e]))
			}
		}
		if first == nil {
			first = got
			continue
		}
		for i := range got {
			if !slices.Equal(got[i], first[i]) {
				t.Errorf("%d workers: gradient %d differs from 1 worker's", workers, i)
			}
		}
	}
}
