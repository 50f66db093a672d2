package policy

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// supportByCondat is the threshold as Condat's algorithm finds it on every entry above m - 1, the
// prefilter alone: the reference for SparsemaxSupport, which narrows the candidates further.
func supportByCondat(h []float32, scale float32) (m, ts float64, support []int32) {
	mf, _, _ := kRowMax(h, scale)
	m = float64(mf)
	bound := below[float32](m-1, m)
	var buf []float32
	var idx []int32
	for i, x := range h {
		if v := x * scale; v > bound {
			buf, idx = append(buf, v), append(idx, int32(i))
		}
	}
	ts, _ = thresholdCondat(slices.Clone(buf), m)
	for j, i := range idx {
		if float32(relu((float64(buf[j])-m)-ts)) > 0 {
			support = append(support, i)
		}
	}
	return m, ts, support
}

// SparsemaxSupport gives the bits of Condat's algorithm on all of the prefilter's candidates, on
// flat rows (where Michelot's steps over the row narrow them first), on peaked ones and on rows
// with ties, scaled or not. Condat's algorithm ends with thresholdOnSupport over the support in
// its input's order, so how the candidates were narrowed does not reach the threshold's bits: a
// faster narrowing keeps a training run's bits when this test passes.
func TestSparsemaxSupportKeepsCondatsBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 23))
	for _, k := range []int{49, 100, 729, 4096, 15625} {
		for _, sd := range []float64{1e-4, 0.01, 0.05, 0.17, 0.5, 2} {
			for _, scale := range []float32{1, 10, 1 / float32(0.3)} {
				for rep := range 6 {
					h := make([]float32, k)
					shift := 3 * rng.NormFloat64()
					for i := range h {
						h[i] = float32(sd*rng.NormFloat64() + shift)
						if rep%3 == 2 && i%2 == 1 { // ties, as a quantised head makes them
							h[i] = h[i-1]
						}
					}
					m, ts, sup, ok := SparsemaxSupport(h, scale, make([]float32, k), make([]int32, k))
					rm, rts, rsup := supportByCondat(h, scale)
					if !ok || m != rm || math.Float64bits(ts) != math.Float64bits(rts) || !slices.Equal(sup, rsup) {
						t.Fatalf("K=%d sd=%v scale=%v rep %d: m %v ts %v support %d (ok %v), Condat on every candidate: %v %v %d",
							k, sd, scale, rep, m, ts, len(sup), ok, rm, rts, len(rsup))
					}
				}
			}
		}
	}
}
