package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// MatMulRange writes the product MatMul writes, bit for bit, and on the wide kernel's shapes each
// row's largest and smallest entries and whether all are numbers: rows of numbers, a row with a
// NaN input and one with an infinite input, on one and three workers. Elsewhere, and on the
// pure-Go engine, it reports no range.
func TestMatMulRange(t *testing.T) {
	e, _ := wideEngines(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, s := range []struct{ m, k, n int }{{9, 1, 4096}, {13, 17, 4103}, {37, 64, 4111}, {250, 65, 15625}} {
		for _, workers := range []string{"1", "3"} {
			t.Run(fmt.Sprintf("%dx%dx%d/workers=%s", s.m, s.k, s.n, workers), func(t *testing.T) {
				t.Setenv(EnvWorkers, workers)
				x, w := randMatrix(rng, s.m, s.k), randMatrix(rng, s.k, s.n)
				x.Data[2*s.k] = float32(math.NaN())
				x.Data[5*s.k] = float32(math.Inf(-1))
				want, got := New(s.m, s.n), New(s.m, s.n)
				if err := e.MatMul(want, x, false, w, false, 1, 0); err != nil {
					t.Fatal(err)
				}
				var r RowRange
				if err := e.MatMulRange(got, x, w, &r); err != nil {
					t.Fatal(err)
				}
				if !r.Valid || len(r.Max) != s.m {
					t.Fatalf("range valid %v with %d rows, want valid with %d", r.Valid, len(r.Max), s.m)
				}
				for i := range want.Data {
					if math.Float32bits(got.Data[i]) != math.Float32bits(want.Data[i]) {
						t.Fatalf("entry (%d, %d) is %v, MatMul gives %v", i/s.n, i%s.n, got.Data[i], want.Data[i])
					}
				}
				for i := range s.m {
					row := want.Row(i)
					finite := true
					hi, lo := float32(math.Inf(-1)), float32(math.Inf(1))
					for _, v := range row {
						finite = finite && !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0)
						hi, lo = max(hi, v), min(lo, v)
					}
					if r.Finite(i) != finite {
						t.Fatalf("row %d: finite %v, want %v", i, r.Finite(i), finite)
					}
					if finite && (r.Max[i] != hi || r.Min[i] != lo) {
						t.Fatalf("row %d: range [%v, %v], want [%v, %v]", i, r.Min[i], r.Max[i], lo, hi)
					}
				}
				if r.Finite(2) || r.Finite(5) || !r.Finite(0) {
					t.Fatalf("rows 0, 2, 5 finite %v %v %v, want true false false", r.Finite(0), r.Finite(2), r.Finite(5))
				}
			})
		}
	}
	for _, c := range []struct {
		name    string
		eng     *Engine
		m, k, n int
	}{{"narrow", e, 40, 65, 729}, {"pure Go", GonumEngine(), 40, 65, 4096}} {
		x, w := randMatrix(rng, c.m, c.k), randMatrix(rng, c.k, c.n)
		want, got := New(c.m, c.n), New(c.m, c.n)
		if err := c.eng.MatMul(want, x, false, w, false, 1, 0); err != nil {
			t.Fatal(err)
		}
		r := RowRange{Valid: true}
		if err := c.eng.MatMulRange(got, x, w, &r); err != nil {
			t.Fatal(err)
		}
		if r.Valid {
			t.Errorf("%s: a range reported", c.name)
		}
		for i := range want.Data {
			if math.Float32bits(got.Data[i]) != math.Float32bits(want.Data[i]) {
				t.Fatalf("%s: entry %d is %v, MatMul gives %v", c.name, i, got.Data[i], want.Data[i])
			}
		}
	}
	if err := e.MatMulRange(New(3, 4), New(3, 5), New(4, 4), &RowRange{}); err == nil {
		t.Error("mismatched shapes: no error")
	}
}
