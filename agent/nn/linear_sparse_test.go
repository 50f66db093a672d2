package nn_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// sparseEngines are the backends the dense reference runs on.
func sparseEngines(t testing.TB) []*tensor.Engine {
	engs := []*tensor.Engine{tensor.GonumEngine()}
	if e, err := tensor.OpenBLASEngine(); err == nil {
		engs = append(engs, e)
	} else {
		t.Logf("dense reference on gonum only: %v", err)
	}
	return engs
}

func randMatrix(rng *rand.Rand, rows, cols int) *tensor.Matrix {
	m := tensor.New(rows, cols)
	for i := range m.Data {
		m.Data[i] = float32(rng.NormFloat64())
	}
	return m
}

// twinLinears returns two Linears with the same weights, bias and
// (nonzero) accumulated gradients.
func twinLinears(t *testing.T, eng *tensor.Engine, in, out int, bias bool, rng *rand.Rand) (a, b *nn.Linear) {
	t.Helper()
	a, err := nn.NewLinear(eng, "a", in, out, bias, rng)
	if err != nil {
		t.Fatal(err)
	}
	b, err = nn.NewLinear(eng, "b", in, out, bias, rng)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range a.Params() {
		q := b.Params()[i]
		for j := range p.Value.Data {
			p.Value.Data[j] = float32(rng.NormFloat64())
			p.Grad.Data[j] = float32(rng.NormFloat64())
		}
		if err := q.Value.CopyFrom(p.Value); err != nil {
			t.Fatal(err)
		}
		if err := q.Grad.CopyFrom(p.Grad); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

// randomSparse fills s with rows x cols entries: each row empty with
// probability pEmpty, otherwise up to maxNNZ distinct random columns.
func randomSparse(rng *rand.Rand, s *nn.SparseRows, rows, cols, maxNNZ int, pEmpty float64) {
	s.Reset(cols)
	seen := make(map[int]bool)
	for r := 0; r < rows; r++ {
		if rng.Float64() >= pEmpty {
			n := 1 + rng.IntN(min(maxNNZ, cols))
			clear(seen)
			for len(seen) < n {
				j := rng.IntN(cols)
				if !seen[j] {
					seen[j] = true
					s.Add(j, float32(rng.NormFloat64()))
				}
			}
		}
		s.EndRow()
	}
}

// assertMatrixClose compares float32 results of sums of up to terms
// products of N(0,1) numbers, accumulated in different orders.
func assertMatrixClose(t *testing.T, what string, got, want []float32, terms int) {
	t.Helper()
	tol := 2e-5 * math.Sqrt(float64(max(terms, 1)))
	for i := range want {
		g, w := float64(got[i]), float64(want[i])
		if !(math.Abs(g-w) <= tol*(1+math.Abs(w))) {
			t.Fatalf("%s[%d] = %v, dense gives %v", what, i, g, w)
		}
	}
}

// BackwardSparse equals the dense Backward on identical copies: several
// shapes, with and without bias, dx nil / overwritten / accumulated,
// random duplicate-free sparsity with empty rows, all-empty and full rows,
// and a row with a repeated column (which adds up).
func TestBackwardSparseMatchesDense(t *testing.T) {
	type shape struct{ in, out, rows, maxNNZ int }
	shapes := []shape{
		{1, 1, 1, 1}, {3, 5, 4, 2}, {5, 4, 7, 4}, {16, 100, 33, 6},
		{64, 729, 50, 8}, {7, 15625, 10, 5}, {2, 3, 6, 3},
	}
	rng := rand.New(rand.NewPCG(31, 7))
	for _, eng := range sparseEngines(t) {
		for _, sh := range shapes {
			for _, bias := range []bool{false, true} {
				for _, mode := range []string{"dx=nil", "overwrite", "accumulate"} {
					for _, pattern := range []string{"random", "all empty", "full rows", "duplicate"} {
						if pattern == "full rows" && sh.out > 800 {
							continue
						}
						name := fmt.Sprintf("%s/%dx%d rows=%d bias=%v %s %s", eng.Backend(), sh.in, sh.out, sh.rows, bias, mode, pattern)
						t.Run(name, func(t *testing.T) {
							dense, sparse := twinLinears(t, eng, sh.in, sh.out, bias, rng)
							x := randMatrix(rng, sh.rows, sh.in)
							if _, err := dense.Forward(x); err != nil {
								t.Fatal(err)
							}
							if _, err := sparse.Forward(x); err != nil {
								t.Fatal(err)
							}
							var dy nn.SparseRows
							switch pattern {
							case "random":
								randomSparse(rng, &dy, sh.rows, sh.out, sh.maxNNZ, 0.25)
							case "all empty":
								randomSparse(rng, &dy, sh.rows, sh.out, sh.maxNNZ, 1)
							case "full rows":
								dy.Reset(sh.out)
								for r := 0; r < sh.rows; r++ {
									if err := dy.AppendDenseRow(randMatrix(rng, 1, sh.out).Data); err != nil {
										t.Fatal(err)
									}
								}
							case "duplicate":
								randomSparse(rng, &dy, sh.rows, sh.out, sh.maxNNZ, 0.25)
								j := int32(rng.IntN(sh.out))
								if err := dy.AppendRow([]int32{j, j}, []float32{0.5, -2}); err != nil {
									t.Fatal(err)
								}
								// Replace the last row of x's batch by this one: rebuild
								// so the matrix keeps sh.rows rows.
								rebuilt := nn.SparseRows{}
								rebuilt.Reset(sh.out)
								for r := 0; r < sh.rows-1; r++ {
									idx, val := dy.Row(r)
									if err := rebuilt.AppendRow(idx, val); err != nil {
										t.Fatal(err)
									}
								}
								idx, val := dy.Row(sh.rows)
								if err := rebuilt.AppendRow(idx, val); err != nil {
									t.Fatal(err)
								}
								dy = rebuilt
							}
							if err := dy.Validate(); err != nil {
								t.Fatal(err)
							}
							dyDense := tensor.New(sh.rows, sh.out)
							if err := dy.ToDense(dyDense); err != nil {
								t.Fatal(err)
							}
							var dxD, dxS *tensor.Matrix
							if mode != "dx=nil" {
								dxD = randMatrix(rng, sh.rows, sh.in)
								if mode == "overwrite" {
									for i := range dxD.Data {
										dxD.Data[i] = float32(math.NaN()) // must be overwritten, not read
									}
								}
								dxS = dxD.Clone()
							}
							acc := mode == "accumulate"
							if err := dense.Backward(dyDense, dxD, acc); err != nil {
								t.Fatal(err)
							}
							if err := sparse.BackwardSparse(&dy, dxS, acc); err != nil {
								t.Fatal(err)
							}
							rowTerms := 0
							for r := 0; r < dy.Rows; r++ {
								idx, _ := dy.Row(r)
								rowTerms = max(rowTerms, len(idx))
							}
							assertMatrixClose(t, "dW", sparse.W.Grad.Data, dense.W.Grad.Data, sh.rows)
							if bias {
								assertMatrixClose(t, "db", sparse.B.Grad.Data, dense.B.Grad.Data, sh.rows)
							}
							if dxD != nil {
								assertMatrixClose(t, "dx", dxS.Data, dxD.Data, rowTerms)
							}
						})
					}
				}
			}
		}
	}
}

// BackwardSparse sums each entry of dW and dx in the order of the rows and entries of dy, as a
// plain loop does, bit for bit: whatever its blocks of input units and its goroutines, and with
// dW holding earlier gradients. Input sizes below, at and across its blocks; repeated columns.
func TestBackwardSparseSumsInRowOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 7))
	for _, sh := range []struct{ in, out, rows, maxNNZ int }{{1, 3, 5, 2}, {17, 40, 30, 6}, {64, 729, 200, 20}, {70, 300, 600, 40}} {
		for _, acc := range []bool{false, true} {
			for _, workers := range []int{1, 2} {
				name := fmt.Sprintf("%dx%d rows=%d accumulate=%v workers=%d", sh.in, sh.out, sh.rows, acc, workers)
				l, err := nn.NewLinear(tensor.GonumEngine(), "l", sh.in, sh.out, true, rng)
				if err != nil {
					t.Fatal(err)
				}
				l.Workers = workers
				x := randMatrix(rng, sh.rows, sh.in)
				if _, err := l.Forward(x); err != nil {
					t.Fatal(err)
				}
				for i := range l.W.Grad.Data {
					l.W.Grad.Data[i] = float32(rng.NormFloat64())
				}
				var dy nn.SparseRows
				randomSparse(rng, &dy, sh.rows-1, sh.out, sh.maxNNZ, 0.2)
				j := int32(rng.IntN(sh.out))
				if err := dy.AppendRow([]int32{j, j}, []float32{0.5, -2}); err != nil {
					t.Fatal(err)
				}
				dx := randMatrix(rng, sh.rows, sh.in)
				wantG, wantDx := slices.Clone(l.W.Grad.Data), slices.Clone(dx.Data)
				in, out := sh.in, sh.out
				for r := range dy.Rows {
					idx, val := dy.Row(r)
					for k := range in {
						var s float32
						for e, c := range idx {
							wantG[k*out+int(c)] += x.Data[r*in+k] * val[e]
							s += val[e] * l.W.Value.Data[k*out+int(c)]
						}
						if acc {
							wantDx[r*in+k] += s
						} else {
							wantDx[r*in+k] = s
						}
					}
				}
				if err := l.BackwardSparse(&dy, dx, acc); err != nil {
					t.Fatal(err)
				}
				for i := range wantG {
					if math.Float32bits(l.W.Grad.Data[i]) != math.Float32bits(wantG[i]) {
						t.Fatalf("%s: dW[%d] = %v, the loop gives %v", name, i, l.W.Grad.Data[i], wantG[i])
					}
				}
				for i := range wantDx {
					if math.Float32bits(dx.Data[i]) != math.Float32bits(wantDx[i]) {
						t.Fatalf("%s: dx[%d] = %v, the loop gives %v", name, i, dx.Data[i], wantDx[i])
					}
				}
			}
		}
	}
}

// Bad input is an error, and nothing is modified.
func TestBackwardSparseErrors(t *testing.T) {
	eng := tensor.GonumEngine()
	rng := rand.New(rand.NewPCG(32, 7))
	l, err := nn.NewLinear(eng, "out", 3, 5, true, rng)
	if err != nil {
		t.Fatal(err)
	}
	var dy nn.SparseRows
	dy.Reset(5)
	dy.Add(1, 1)
	dy.EndRow()
	dy.EndRow()
	if err := l.BackwardSparse(&dy, nil, false); err == nil || !strings.Contains(err.Error(), "before Forward") {
		t.Fatalf("before Forward: %v", err)
	}
	if _, err := l.Forward(randMatrix(rng, 2, 3)); err != nil {
		t.Fatal(err)
	}
	good := func() *nn.SparseRows {
		s := &nn.SparseRows{}
		s.Reset(5)
		s.Add(4, 1)
		s.Add(0, -1)
		s.EndRow()
		s.EndRow()
		return s
	}
	cases := []struct {
		name string
		dy   func() *nn.SparseRows
		dx   *tensor.Matrix
		want string
	}{
		{"nil dy", func() *nn.SparseRows { return nil }, nil, "nil"},
		{"too many columns", func() *nn.SparseRows { s := good(); s.Cols = 6; return s }, nil, "want 2x5"},
		{"too few rows", func() *nn.SparseRows { s := good(); s.Offsets = s.Offsets[:2]; s.Rows = 1; return s }, nil, "want 2x5"},
		{"column = Out", func() *nn.SparseRows { s := good(); s.Index[0] = 5; return s }, nil, "outside [0, 5)"},
		{"negative column", func() *nn.SparseRows { s := good(); s.Index[1] = -1; return s }, nil, "outside [0, 5)"},
		{"column beyond int32", func() *nn.SparseRows {
			s := &nn.SparseRows{}
			s.Reset(5)
			big := math.MaxInt32
			s.Add(big+1, 1) // beyond int32 (wraps to negative where int is 32 bits)
			s.EndRow()
			s.EndRow()
			return s
		}, nil, "outside"},
		{"Add without EndRow", func() *nn.SparseRows { s := good(); s.Add(2, 1); return s }, nil, "without EndRow"},
		{"offsets decrease", func() *nn.SparseRows { s := good(); s.Offsets[1] = 3; s.Offsets[2] = 2; return s }, nil, "decrease"},
		{"offsets do not start at 0", func() *nn.SparseRows { s := good(); s.Offsets[0] = 1; return s }, nil, "start at 1"},
		{"values short", func() *nn.SparseRows { s := good(); s.Values = s.Values[:1]; return s }, nil, "values"},
		{"dx shape", good, tensor.New(2, 4), "dx"},
		{"dx rows", good, tensor.New(3, 3), "dx"},
	}
	for _, c := range cases {
		wBefore, bBefore := l.W.Grad.Clone(), l.B.Grad.Clone()
		var dxBefore *tensor.Matrix
		if c.dx != nil {
			dxBefore = c.dx.Clone()
		}
		err := l.BackwardSparse(c.dy(), c.dx, false)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: err = %v, want one containing %q", c.name, err, c.want)
		}
		if !slices.Equal(l.W.Grad.Data, wBefore.Data) || !slices.Equal(l.B.Grad.Data, bBefore.Data) ||
			(c.dx != nil && !slices.Equal(c.dx.Data, dxBefore.Data)) {
			t.Fatalf("%s: a failed BackwardSparse modified the gradients or dx", c.name)
		}
	}
	if err := l.BackwardSparse(good(), tensor.New(2, 3), false); err != nil {
		t.Fatalf("good input: %v", err)
	}
	var s nn.SparseRows
	s.Reset(5)
	if err := s.AppendRow([]int32{1, 2}, []float32{1}); err == nil {
		t.Fatal("AppendRow with 2 columns and 1 value: no error")
	}
	if err := s.AppendDenseRow(make([]float32, 4)); err == nil {
		t.Fatal("AppendDenseRow with 4 of 5 values: no error")
	}
	var zero nn.SparseRows
	if err := zero.Validate(); err != nil {
		t.Fatalf("zero value: %v", err)
	}
}

// Refilling a SparseRows and running BackwardSparse allocates nothing in
// steady state.
func TestBackwardSparseNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 7))
	l, err := nn.NewLinear(tensor.GonumEngine(), "out", 8, 729, true, rng)
	if err != nil {
		t.Fatal(err)
	}
	x := randMatrix(rng, 40, 8)
	if _, err := l.Forward(x); err != nil {
		t.Fatal(err)
	}
	dx := tensor.New(40, 8)
	var dy nn.SparseRows
	fill := func() {
		dy.Reset(729)
		for r := 0; r < 40; r++ {
			for e := 0; e < 5; e++ {
				dy.Add((r*131+e*17)%729, 0.1)
			}
			dy.EndRow()
		}
		if err := l.BackwardSparse(&dy, dx, true); err != nil {
			t.Fatal(err)
		}
	}
	fill()
	if a := testing.AllocsPerRun(20, fill); a != 0 {
		t.Fatalf("%v allocations per refill + BackwardSparse", a)
	}
}

// BenchmarkBackwardSparse: the output layer of the HalfCheetah policy at |A| = 3^6 and 5^6
// (In = 64) on a batch of 25 sub-episodes x 100 steps (2,500 rows) with a share of each row's
// columns non-zero (density), BackwardSparse against the dense Backward (with dx, on the default
// BLAS engine), interleaved in one loop. Reports the median ms of each and dense/sparse: the
// density where it falls below 1 is where the dense pass pays (control's sparseDensityLimit).
func BenchmarkBackwardSparse(b *testing.B) {
	const in, rows = 64, 2500
	eng, err := tensor.NewEngine()
	if err != nil {
		b.Fatal(err)
	}
	for _, out := range []int{729, 15625} {
		for _, density := range []float64{0.005, 0.02, 0.05, 0.1, 0.2, 0.4} {
			b.Run(fmt.Sprintf("A=%d/density=%v", out, density), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(34, 7))
				l, err := nn.NewLinear(eng, "logits", in, out, true, rng)
				if err != nil {
					b.Fatal(err)
				}
				x := randMatrix(rng, rows, in)
				if _, err := l.Forward(x); err != nil {
					b.Fatal(err)
				}
				nnz := max(1, int(density*float64(out)))
				var dy nn.SparseRows
				dy.Reset(out)
				for r := 0; r < rows; r++ { // exactly nnz distinct columns per row
					for _, j := range rng.Perm(out)[:nnz] {
						dy.Add(j, float32(rng.NormFloat64()))
					}
					dy.EndRow()
				}
				dyDense := tensor.New(rows, out)
				if err := dy.ToDense(dyDense); err != nil {
					b.Fatal(err)
				}
				dx := tensor.New(rows, in)
				var sparseT, denseT []time.Duration
				for b.Loop() {
					t0 := time.Now()
					if err := l.BackwardSparse(&dy, dx, false); err != nil {
						b.Fatal(err)
					}
					t1 := time.Now()
					if err := l.Backward(dyDense, dx, false); err != nil {
						b.Fatal(err)
					}
					sparseT = append(sparseT, t1.Sub(t0))
					denseT = append(denseT, time.Since(t1))
				}
				median := func(d []time.Duration) float64 {
					slices.Sort(d)
					return float64(d[len(d)/2].Nanoseconds()) / 1e6
				}
				s, d := median(sparseT), median(denseT)
				b.ReportMetric(s, "sparse-ms")
				b.ReportMetric(d, "dense-ms")
				b.ReportMetric(d/s, "dense/sparse")
			})
		}
	}
}
