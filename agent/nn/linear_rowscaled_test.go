package nn_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// randomRowScaled returns e (rows x cols, entries in [0, 1) as exponentials are, one entry per row
// shifted by up to -cols as soft PCL's taken action is) and a row-scaled gradient over it: random
// factors, zero in some rows.
func randomRowScaled(rng *rand.Rand, rows, cols int) (*tensor.Matrix, *nn.RowScaled) {
	e := tensor.New(rows, cols)
	for i := range e.Data {
		e.Data[i] = rng.Float32()
	}
	s := &nn.RowScaled{}
	s.Reset(rows)
	for r := range rows {
		e.Data[r*cols+rng.IntN(cols)] -= rng.Float32() * float32(cols)
		if rng.IntN(5) > 0 {
			s.Scale[r] = float32(rng.NormFloat64())
		}
	}
	return e, s
}

// BackwardRowScaled equals the dense Backward on dy = ToDense(e, s) on identical copies: small and
// large shapes (the large ones take Linear's bias-folded products), with and without bias, dx nil,
// overwritten and accumulated, on every engine.
func TestBackwardRowScaledMatchesDense(t *testing.T) {
	type shape struct{ in, out, rows int }
	shapes := []shape{{1, 1, 1}, {3, 5, 4}, {16, 100, 33}, {64, 729, 50}, {17, 15625, 70}}
	rng := rand.New(rand.NewPCG(41, 7))
	for _, eng := range sparseEngines(t) {
		for _, sh := range shapes {
			for _, bias := range []bool{false, true} {
				for _, mode := range []string{"dx=nil", "overwrite", "accumulate"} {
					name := fmt.Sprintf("%s/%dx%d rows=%d bias=%v %s", eng.Backend(), sh.in, sh.out, sh.rows, bias, mode)
					t.Run(name, func(t *testing.T) {
						dense, scaled := twinLinears(t, eng, sh.in, sh.out, bias, rng)
						x := randMatrix(rng, sh.rows, sh.in)
						if _, err := dense.Forward(x); err != nil {
							t.Fatal(err)
						}
						if _, err := scaled.Forward(x); err != nil {
							t.Fatal(err)
						}
						e, s := randomRowScaled(rng, sh.rows, sh.out)
						dy := tensor.New(sh.rows, sh.out)
						if err := s.ToDense(e, dy); err != nil {
							t.Fatal(err)
						}
						var dxDense, dxScaled *tensor.Matrix
						if mode != "dx=nil" {
							dxDense = randMatrix(rng, sh.rows, sh.in)
							dxScaled = dxDense.Clone()
						}
						acc := mode == "accumulate"
						if err := dense.Backward(dy, dxDense, acc); err != nil {
							t.Fatal(err)
						}
						if err := scaled.BackwardRowScaled(e, s, dxScaled, acc); err != nil {
							t.Fatal(err)
						}
						assertMatrixClose(t, "dW", scaled.W.Grad.Data, dense.W.Grad.Data, sh.rows)
						if bias {
							assertMatrixClose(t, "db", scaled.B.Grad.Data, dense.B.Grad.Data, sh.rows)
						}
						if dxDense != nil {
							assertMatrixClose(t, "dx", dxScaled.Data, dxDense.Data, sh.out)
						}
					})
				}
			}
		}
	}
}

// ToDense writes each row's factor times e.
func TestRowScaledToDense(t *testing.T) {
	e, err := tensor.FromSlice(2, 3, []float32{1, 2, 3, 0.5, 0.25, 1})
	if err != nil {
		t.Fatal(err)
	}
	s := &nn.RowScaled{}
	s.Reset(2)
	s.Scale[0], s.Scale[1] = 2, -4
	dst := tensor.New(2, 3)
	if err := s.ToDense(e, dst); err != nil {
		t.Fatal(err)
	}
	want := []float32{2, 4, 6, -2, -1, -4}
	for i, w := range want {
		if dst.Data[i] != w {
			t.Fatalf("ToDense = %v, want %v", dst.Data, want)
		}
	}
}

// Wrong shapes, a missing Forward and a nil gradient are errors that say which.
func TestBackwardRowScaledErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 7))
	newLayer := func() *nn.Linear {
		l, err := nn.NewLinear(tensor.GonumEngine(), "out", 3, 5, true, rng)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	l := newLayer()
	e, s := randomRowScaled(rng, 4, 5)
	if err := l.BackwardRowScaled(e, s, nil, false); err == nil || !strings.Contains(err.Error(), "before Forward") {
		t.Fatalf("before Forward: %v", err)
	}
	if _, err := l.Forward(randMatrix(rng, 4, 3)); err != nil {
		t.Fatal(err)
	}
	short := &nn.RowScaled{}
	short.Reset(3)
	cases := []struct {
		name string
		e    *tensor.Matrix
		s    *nn.RowScaled
		dx   *tensor.Matrix
		want string
	}{
		{"nil gradient", e, nil, nil, "nil row-scaled"},
		{"e of another shape", tensor.New(4, 6), s, nil, "row-scaled dy"},
		{"too few factors", e, short, nil, "3 factors for 4 rows"},
		{"dx of another shape", e, s, tensor.New(4, 2), "dx"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := l.BackwardRowScaled(c.e, c.s, c.dx, false)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "out.W") {
				t.Fatalf("error %v, want one naming the layer and %q", err, c.want)
			}
		})
	}
}

// Refilling the gradient and passing it back allocates nothing once the scratch has grown (on
// the default engine: gonum's products allocate their own workers).
func TestBackwardRowScaledNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(44, 7))
	eng, err := tensor.NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	l, err := nn.NewLinear(eng, "out", 8, 729, true, rng)
	if err != nil {
		t.Fatal(err)
	}
	x := randMatrix(rng, 40, 8)
	if _, err := l.Forward(x); err != nil {
		t.Fatal(err)
	}
	e, s := randomRowScaled(rng, 40, 729)
	dx := tensor.New(40, 8)
	run := func() {
		s.Reset(40)
		for r := range 40 {
			s.Scale[r] = 0.5
		}
		if err := l.BackwardRowScaled(e, s, dx, true); err != nil {
			t.Fatal(err)
		}
	}
	run()
	if a := testing.AllocsPerRun(20, run); a != 0 {
		t.Fatalf("%v allocations per refill + BackwardRowScaled", a)
	}
}
