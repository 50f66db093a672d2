package policy

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The float32 row kernels agree with the reference functions: SoftRowStats and SoftRowExp with
// LogSumExp and Softmax, SparsemaxSupport with Sparsemax (threshold, support, probabilities),
// on flat, spread and sharp rows, scaled (unified form) or not; non-finite rows are refused.
func TestRowKernelsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, k := range []int{1, 7, 17, 729, 15625} {
		for _, sd := range []float64{0.01, 0.05, 1, 10, 1e4} {
			for _, scale := range []float32{1, 1 / float32(0.3)} {
				h := make([]float32, k)
				for i := range h {
					h[i] = float32(sd*rng.NormFloat64() + 3)
				}
				z := make([]float32, k)
				for i := range h {
					z[i] = h[i] * scale
				}
				p := make([]float32, k)
				lse := LogSumExp(z, nil)
				Softmax(p, z, nil)
				r, ok := SoftRowStats(h, scale)
				if !ok || math.Abs(r.LSE-lse) > 1e-6*math.Max(1, math.Abs(lse)) {
					t.Errorf("K=%d sd=%v: log-sum-exp %v (ok %v), reference %v", k, sd, r.LSE, ok, lse)
				}
				d := make([]float32, k)
				SoftRowExp(d, h, scale, r, 1)
				for i := range p {
					if math.Abs(float64(d[i]-p[i])) > 1e-5*float64(p[i])+1e-30 {
						t.Fatalf("K=%d sd=%v: softmax[%d] %v, reference %v", k, sd, i, d[i], p[i])
					}
				}
				tau, support := Sparsemax(p, z, nil)
				m, ts, sup, ok := SparsemaxSupport(h, scale, make([]float32, k), make([]int32, k))
				if !ok || math.Abs(ts+m-tau) > 1e-9*math.Max(1, math.Abs(tau)) || len(sup) != support {
					t.Fatalf("K=%d sd=%v: threshold %v support %d (ok %v), reference %v and %d", k, sd, ts+m, len(sup), ok, tau, support)
				}
				j := 0
				for i, v := range p {
					if v > 0 {
						if sup[j] != int32(i) {
							t.Fatalf("K=%d sd=%v: support[%d] = %d, reference %d", k, sd, j, sup[j], i)
						}
						if q := float32(relu((float64(z[i]) - m) - ts)); math.Abs(float64(q-v)) > 1e-6 {
							t.Fatalf("K=%d sd=%v: p[%d] = %v, reference %v", k, sd, i, q, v)
						}
						j++
					}
				}
			}
		}
	}
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		h := []float32{0, 1, bad, 2}
		if _, ok := SoftRowStats(h, 1); ok {
			t.Errorf("SoftRowStats accepted %v", bad)
		}
		if _, _, _, ok := SparsemaxSupport(h, 1, make([]float32, 4), make([]int32, 4)); ok {
			t.Errorf("SparsemaxSupport accepted %v", bad)
		}
	}
}

// TestMaxAndSupport compares the vectorised pass with the loop it replaces, on rows of every
// length up to 40 (the kernel's tails) and a long one, with zeros, subnormals and ties.
func TestMaxAndSupport(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 0; n <= 41; n++ {
		if n == 41 {
			n = 15625
		}
		p := make([]float32, n)
		for i := range p {
			switch rng.IntN(4) {
			case 0:
				p[i] = 0
			case 1:
				p[i] = math.SmallestNonzeroFloat32
			default:
				p[i] = float32(rng.Float64())
			}
		}
		var wm float32
		wn := 0
		for _, v := range p {
			wm = max(wm, v)
			if v > 0 {
				wn++
			}
		}
		if m, c := MaxAndSupport(p); math.Float32bits(m) != math.Float32bits(wm) || c != wn {
			t.Fatalf("n=%d: got (%v, %d), want (%v, %d)", n, m, c, wm, wn)
		}
	}
}

// kRowGatherAbove lists, in ascending order, exactly the entries a plain loop finds above the
// threshold: at lengths around its 16-wide blocks, with none, a few, most and all entries above,
// and with NaN entries (never above). It gives up exactly when more than its limit are above.
func TestRowGatherAboveMatchesLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, k := range []int{1, 15, 16, 17, 31, 32, 33, 729, 15625} {
		h := make([]float32, k)
		for i := range h {
			h[i] = float32(rng.NormFloat64())
			if i%97 == 5 {
				h[i] = float32(math.NaN())
			}
		}
		for _, thr := range []float32{-100, -1, 0, 1.5, 3, 100} {
			for _, scale := range []float32{1, 2.5} {
				var want []int32
				for i, v := range h {
					if v*scale > thr {
						want = append(want, int32(i))
					}
				}
				idx := make([]int32, k)
				n, ok := kRowGatherAbove(h, scale, thr, idx, k)
				if !ok {
					t.Fatalf("K=%d t=%v scale=%v: gave up with the limit at the row's length", k, thr, scale)
				}
				// Just at its limit it finishes; one below, it gives up (an empty row never does).
				if _, ok := kRowGatherAbove(h, scale, thr, make([]int32, k), len(want)); !ok {
					t.Fatalf("K=%d t=%v scale=%v: gave up at the limit %d, the number above", k, thr, scale, len(want))
				}
				if _, ok := kRowGatherAbove(h, scale, thr, make([]int32, k), len(want)-1); ok && len(want) > 0 {
					t.Fatalf("K=%d t=%v scale=%v: finished with the limit %d below the %d above", k, thr, scale, len(want)-1, len(want))
				}
				got := idx[:n]
				if len(got) != len(want) {
					t.Fatalf("K=%d t=%v scale=%v: %d entries, want %d", k, thr, scale, len(got), len(want))
				}
				for j := range want {
					if got[j] != want[j] {
						t.Fatalf("K=%d t=%v scale=%v: entry %d is %d, want %d", k, thr, scale, j, got[j], want[j])
					}
				}
			}
		}
	}
}

// SoftRowStatsExp then SoftRowScale give SoftRowStats' statistics and SoftRowExp's row bit for
// bit: at lengths around the 16-wide vectors and the 256-entry blocks of the sums, on flat rows
// and on rows spread enough that some exponentials fall below e^-80 (the subnormal path), in
// blocks with and without such entries; a non-finite row is refused.
func TestSoftRowStatsExpMatchesTwoPasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	for _, k := range []int{1, 15, 16, 17, 255, 256, 257, 729, 15625} {
		for _, sd := range []float64{0.05, 1, 30} {
			for _, scale := range []float32{1, 1 / float32(0.3)} {
				h := make([]float32, k)
				for i := range h {
					h[i] = float32(sd * rng.NormFloat64())
				}
				want, ok := SoftRowStats(h, scale)
				e := make([]float32, k)
				got, ok2 := SoftRowStatsExp(h, scale, e, ExpMatched)
				if !ok || !ok2 || got != want {
					t.Fatalf("K=%d sd=%v scale=%v: stats %+v (ok %v), two passes %+v (ok %v)", k, sd, scale, got, ok2, want, ok)
				}
				const c = -0.7
				d := make([]float32, k)
				SoftRowExp(d, h, scale, want, c)
				SoftRowScale(e, got, c)
				tiny := 0
				for i := range d {
					if math.Float32bits(e[i]) != math.Float32bits(d[i]) {
						t.Fatalf("K=%d sd=%v scale=%v: entry %d is %v, two passes %v", k, sd, scale, i, e[i], d[i])
					}
					if float64(h[i]*scale-want.M) < -80 {
						tiny++
					}
				}
				if sd == 30 && k >= 729 && tiny == 0 {
					t.Fatalf("K=%d: no entry below e^-80: the subnormal path is untested", k)
				}
			}
		}
	}
	if _, ok := SoftRowStatsExp([]float32{0, float32(math.NaN()), 1}, 1, make([]float32, 3), ExpMatched); ok {
		t.Error("a row with NaN was not refused")
	}
}

// SoftRowStatsExpRange, given the row's extremes and finiteness as a product reports them, gives
// SoftRowStatsExp's statistics and exponentials bit for bit, and refuses the rows it refuses: a
// NaN, an infinity, and finite entries that the scale takes beyond float32.
func TestSoftRowStatsExpRangeMatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 19))
	rangeOf := func(h []float32) (hi, lo float32, finite bool) {
		hi, lo, finite = float32(math.Inf(-1)), float32(math.Inf(1)), true
		for _, v := range h {
			finite = finite && !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0)
			hi, lo = max(hi, v), min(lo, v)
		}
		return hi, lo, finite
	}
	for _, x := range []RowExp{ExpMatched, ExpFused} {
		for _, k := range []int{1, 17, 729, 15625} {
			for _, sd := range []float64{0.05, 1, 30} {
				for _, scale := range []float32{1, 1 / float32(0.3)} {
					h := make([]float32, k)
					for i := range h {
						h[i] = float32(sd * rng.NormFloat64())
					}
					e1, e2 := make([]float32, k), make([]float32, k)
					want, ok := SoftRowStatsExp(h, scale, e1, x)
					hi, lo, finite := rangeOf(h)
					got, ok2 := SoftRowStatsExpRange(h, scale, hi, lo, finite, e2, x)
					if !ok || !ok2 || got != want {
						t.Fatalf("exp %d K=%d sd=%v scale=%v: %+v (ok %v), SoftRowStatsExp %+v (ok %v)", x, k, sd, scale, got, ok2, want, ok)
					}
					for i := range e1 {
						if math.Float32bits(e1[i]) != math.Float32bits(e2[i]) {
							t.Fatalf("exp %d K=%d sd=%v scale=%v: exponential %d is %v, SoftRowStatsExp's %v", x, k, sd, scale, i, e2[i], e1[i])
						}
					}
				}
			}
		}
	}
	for _, c := range []struct {
		name  string
		h     []float32
		scale float32
	}{
		{"NaN", []float32{0, float32(math.NaN()), 1}, 1},
		{"infinity", []float32{0, float32(math.Inf(1)), 1}, 1},
		{"beyond float32 once scaled, above", []float32{0, 3e38, 1}, 10},
		{"beyond float32 once scaled, below", []float32{0, -3e38, 1}, 10},
	} {
		_, want := SoftRowStatsExp(c.h, c.scale, make([]float32, len(c.h)), ExpMatched)
		hi, lo, finite := rangeOf(c.h)
		if _, ok := SoftRowStatsExpRange(c.h, c.scale, hi, lo, finite, make([]float32, len(c.h)), ExpFused); ok || want {
			t.Errorf("%s: accepted (ok %v; SoftRowStatsExp ok %v)", c.name, ok, want)
		}
	}
}

// With ExpFused, SoftRowStatsExp's exponentials are e^(z_i - m) within 2.5e-7 relative (f32.Exp's
// bound; the fused polynomial rounds less) and 4e-7 below e^-80, through the subnormals below e^-80 as ExpMatched's,
// and its statistics are ExpMatched's up to rounding; a non-finite row is refused. The rows span
// the vectors' and blocks' edges, and logits from flat to spread past e^-87 (the clamp).
func TestSoftRowStatsExpFused(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 23))
	for _, k := range []int{1, 15, 16, 17, 255, 256, 257, 729, 15625} {
		for _, sd := range []float64{0.05, 1, 30} {
			for _, scale := range []float32{1, 1 / float32(0.3)} {
				h := make([]float32, k)
				for i := range h {
					h[i] = float32(sd * rng.NormFloat64())
				}
				e, em := make([]float32, k), make([]float32, k)
				got, ok := SoftRowStatsExp(h, scale, e, ExpFused)
				want, ok2 := SoftRowStatsExp(h, scale, em, ExpMatched)
				if !ok || !ok2 || got.M != want.M {
					t.Fatalf("K=%d sd=%v scale=%v: %+v (ok %v), matched %+v (ok %v)", k, sd, scale, got, ok, want, ok2)
				}
				if d := math.Abs(got.LSE - want.LSE); d > 1e-6*math.Max(1, math.Abs(want.LSE)) {
					t.Errorf("K=%d sd=%v scale=%v: log-sum-exp %v, matched %v", k, sd, scale, got.LSE, want.LSE)
				}
				if r := math.Abs(float64(got.Inv)/float64(want.Inv) - 1); r > 1e-6 {
					t.Errorf("K=%d sd=%v scale=%v: 1/sum %v, matched %v", k, sd, scale, got.Inv, want.Inv)
				}
				for i, v := range h {
					x := float64(v*scale - got.M)
					// Below e^-80 the exponential is e^(x+64) times e^-64 rounded to float32 (two more
					// roundings), then a subnormal or 0: within a subnormal's step of it.
					exact, rel := math.Exp(x), 2.5e-7
					if x < -80 {
						rel = 4e-7
					}
					if tol := math.Max(rel*exact, 1.5e-45); math.Abs(float64(e[i])-exact) > tol {
						t.Fatalf("K=%d sd=%v scale=%v: e^%v = %v, want %v", k, sd, scale, x, e[i], exact)
					}
				}
			}
		}
	}
	if _, ok := SoftRowStatsExp([]float32{0, float32(math.Inf(-1)), 1}, 1, make([]float32, 3), ExpFused); ok {
		t.Error("a row with an infinity was not refused")
	}
}

// The fused exponential's two C kernels, the FMA instructions' and fmaf's lane by lane (CPUs
// without FMA), give the same bits, the sum included; in a build without cgo both are one kernel.
func TestFusedExpKernelsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 29))
	for _, k := range []int{3, 16, 255, 257, 15625} {
		for _, sd := range []float64{1, 30} {
			h := make([]float32, k)
			for i := range h {
				h[i] = float32(sd * rng.NormFloat64())
			}
			m, _, _ := kRowMax(h, 1)
			e1, e2 := make([]float32, k), make([]float32, k)
			s1, s2 := kRowSumExpStoreFused(e1, h, 1, m, false), kRowSumExpStoreFused(e2, h, 1, m, true)
			if s1 != s2 {
				t.Fatalf("K=%d sd=%v: sum %v, %v lane by lane", k, sd, s1, s2)
			}
			for i := range e1 {
				if math.Float32bits(e1[i]) != math.Float32bits(e2[i]) {
					t.Fatalf("K=%d sd=%v: e[%d] = %v, %v lane by lane", k, sd, i, e1[i], e2[i])
				}
			}
		}
	}
}
