package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// wideEngines returns the OpenBLAS engine (which takes the wide kernel) and the same library
// without it, or skips when the CPU does not run the kernel.
func wideEngines(tb testing.TB) (withWide, plain *Engine) {
	tb.Helper()
	var e *Engine
	if t, ok := tb.(*testing.T); ok {
		e = openBLASForTest(t)
	} else {
		var err error
		if e, err = OpenBLASEngine(); err != nil {
			tb.Skip(err)
		}
	}
	o, ok := e.impl.(*openBLAS)
	if !ok || !o.wide {
		tb.Skip("the wide kernel does not run on this CPU")
	}
	return e, &Engine{impl: &openBLAS{sgemm: o.sgemm, sgemv: o.sgemv, threads: o.threads}, name: "openblas without the wide kernel"}
}

// TestWideMatchesFewRows requires every row of the wide kernel's product to carry the bits of the
// one-row kernel on the same row (fused multiply-adds from zero, k in order), whatever the split
// of the rows into blocks, over shapes with every remainder of the 6 x 16 tile and of the column
// block; and the engine to route the training shapes to it, within float rounding of OpenBLAS.
func TestWideMatchesFewRows(t *testing.T) {
	e, plain := wideEngines(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, s := range []struct{ m, k, n int }{
		{9, 1, 4096}, {13, 17, 4103}, {37, 64, 4111}, {250, 65, 15625}, {2525, 65, 5000}, {20, 128, 9000},
	} {
		t.Run(fmt.Sprintf("%dx%dx%d", s.m, s.k, s.n), func(t *testing.T) {
			if !wide(false, false, s.m, s.n, s.k, 1, 0) {
				t.Fatalf("shape %+v does not take the wide kernel", s)
			}
			x, w := randMatrix(rng, s.m, s.k), randMatrix(rng, s.k, s.n)
			for i := range w.Data {
				w.Data[i] *= 0.05
				if rng.IntN(50) == 0 {
					w.Data[i] = float32(math.Copysign(0, -1))
				}
			}
			for i := range x.Data[:s.k] {
				x.Data[i] = 0 // a row of zeros: every entry +0, as the one-row kernel stores it
			}
			want := New(s.m, s.n)
			for r := range s.m {
				fewRowsSgemm(1, s.k, x.Row(r), s.k, w.Data, s.n, want.Row(r), s.n, 0, s.n)
			}
			for _, split := range [][]int{{0, s.m}, {0, 7, s.m}, {0, 1, s.m / 2, s.m}} {
				got := New(s.m, s.n)
				for i := range got.Data {
					got.Data[i] = float32(math.NaN())
				}
				bp := make([]float32, widePanels(s.n, s.k))
				widePack(s.n, s.k, w.Data, bp)
				for i := 1; i < len(split); i++ {
					wideSgemm(split[i-1], split[i], s.n, s.k, x.Data, w.Data, bp, got.Data)
				}
				for i := range got.Data {
					if math.Float32bits(got.Data[i]) != math.Float32bits(want.Data[i]) {
						t.Fatalf("split %v: entry (%d, %d) is %v (%#x), the one-row kernel gives %v (%#x)", split, i/s.n, i%s.n,
							got.Data[i], math.Float32bits(got.Data[i]), want.Data[i], math.Float32bits(want.Data[i]))
					}
				}
			}
			got, ref := New(s.m, s.n), New(s.m, s.n)
			if err := e.MatMul(got, x, false, w, false, 1, 0); err != nil {
				t.Fatal(err)
			}
			for i := range got.Data {
				if math.Float32bits(got.Data[i]) != math.Float32bits(want.Data[i]) {
					t.Fatalf("the engine's product differs from the wide kernel's at (%d, %d)", i/s.n, i%s.n)
				}
			}
			if err := plain.MatMul(ref, x, false, w, false, 1, 0); err != nil {
				t.Fatal(err)
			}
			for i := range got.Data {
				if d := math.Abs(float64(got.Data[i] - ref.Data[i])); d > 1e-5*(1+math.Abs(float64(ref.Data[i]))) {
					t.Fatalf("entry (%d, %d): %v, OpenBLAS %v", i/s.n, i%s.n, got.Data[i], ref.Data[i])
				}
			}
		})
	}
	// What the kernel must leave to OpenBLAS: transposes, alpha and beta, few rows, narrow or deep.
	for _, s := range []struct {
		ta, tb      bool
		m, n, k     int
		alpha, beta float32
	}{
		{true, false, 2525, 15625, 65, 1, 0}, {false, true, 2525, 15625, 65, 1, 0}, {false, false, 2525, 15625, 65, 2, 0},
		{false, false, 2525, 15625, 65, 1, 1}, {false, false, 8, 15625, 64, 1, 0}, {false, false, 2525, 729, 65, 1, 0},
		{false, false, 2525, 15625, 129, 1, 0},
	} {
		if wide(s.ta, s.tb, s.m, s.n, s.k, s.alpha, s.beta) {
			t.Errorf("%+v takes the wide kernel", s)
		}
	}
}

// BenchmarkWideVsOpenBLAS times the training step's output-layer forward (2,525 rows x 65 times
// 65 x |A|, the bias folded in) with the wide kernel and with OpenBLAS's sgemm, alternately in the
// same run, and reports each in milliseconds per call and their ratio (speedup; cpu-speedup in
// process CPU time).
func BenchmarkWideVsOpenBLAS(b *testing.B) {
	_, plain := wideEngines(b)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{729, 4096, 15625} {
		b.Run(fmt.Sprintf("A=%d", n), func(b *testing.B) {
			x, w, y := randMatrix(rng, 2525, 65), randMatrix(rng, 65, n), New(2525, n)
			var tWide, tBLAS, cWide, cBLAS float64
			for b.Loop() {
				t, c := timeIt(func() { wideProduct(2525, n, 65, x.Data, w.Data, y.Data, nil) })
				tWide, cWide = tWide+t, cWide+c
				t, c = timeIt(func() { _ = plain.MatMul(y, x, false, w, false, 1, 0) })
				tBLAS, cBLAS = tBLAS+t, cBLAS+c
			}
			b.ReportMetric(tWide/float64(b.N)*1e3, "ms-wide")
			b.ReportMetric(tBLAS/float64(b.N)*1e3, "ms-openblas")
			b.ReportMetric(tBLAS/tWide, "speedup")
			b.ReportMetric(cBLAS/cWide, "cpu-speedup")
		})
	}
}

// A packed wide product gives MatMul's bits, on the shapes the wide kernel takes (a 5^6 output
// layer's blocks) and on those it does not (3^6, few rows), for every row count.
func TestMatMulPackedMatchesMatMul(t *testing.T) {
	eng, err := NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{729, 15625} {
		b := New(65, n)
		for i := range b.Data {
			b.Data[i] = float32(rng.NormFloat64())
		}
		var p WidePacked
		eng.PackWide(&p, b)
		for _, m := range []int{1, 8, 9, 101, 707} {
			a := New(m, 65)
			for i := range a.Data {
				a.Data[i] = float32(rng.NormFloat64())
			}
			want, got := New(m, n), New(m, n)
			if err := eng.MatMul(want, a, false, b, false, 1, 0); err != nil {
				t.Fatal(err)
			}
			if err := eng.MatMulPacked(got, a, &p); err != nil {
				t.Fatal(err)
			}
			for i := range want.Data {
				if got.Data[i] != want.Data[i] {
					t.Fatalf("%s, %d x 65 · 65 x %d: entry %d is %v, MatMul's %v", eng.Backend(), m, n, i, got.Data[i], want.Data[i])
				}
			}
		}
	}
}
