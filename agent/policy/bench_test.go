package policy

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

var benchSizes = []int{20, 160, 729, 15625}

type benchRows struct {
	k       int
	z, v    [][]float32
	p, grad []float32
}

// newBenchRows makes rows of N(0, scale^2) logits, as an untrained (scale
// 1) or a fairly peaked (scale 5) policy head produces.
func newBenchRows(k int, scale float64) *benchRows {
	rng := newRNG(uint64(k))
	const rows = 32
	br := &benchRows{k: k, p: make([]float32, k), grad: make([]float32, k)}
	for r := 0; r < rows; r++ {
		z := make([]float32, k)
		v := make([]float32, k)
		for i := range z {
			z[i] = float32(scale * rng.NormFloat64())
			v[i] = float32(rng.NormFloat64())
		}
		br.z = append(br.z, z)
		br.v = append(br.v, v)
	}
	return br
}

// sparsemaxRow is one forward + backward (JVP) pass of a row.
func (br *benchRows) sparsemaxRow(alg Algorithm, i int) {
	r := i % len(br.z)
	SparsemaxWith(alg, br.p, br.z[r], nil)
	SparsemaxJVP(br.grad, br.p, br.v[r])
}

// BenchmarkSparsemax: forward + backward per row, one sub-benchmark per
// (K, algorithm); ns/op is ns/row.
func BenchmarkSparsemax(b *testing.B) {
	for _, scale := range []float64{1, 5} {
		for _, k := range benchSizes {
			br := newBenchRows(k, scale)
			for _, alg := range []Algorithm{Sort, Pivot, Condat, Bisect, Auto} {
				b.Run(fmt.Sprintf("scale=%g/K=%d/%s", scale, k, alg), func(b *testing.B) {
					for i := 0; b.Loop(); i++ {
						br.sparsemaxRow(alg, i)
					}
				})
			}
		}
	}
}

// BenchmarkSparsemaxSideBySide times sort, pivot and Condat interleaved
// in one loop (same data, same machine state) and reports ns/row for each
// and the ratios selection/sort, for each K: the numbers behind
// AutoSelectionMinK.
func BenchmarkSparsemaxSideBySide(b *testing.B) {
	algs := []Algorithm{Sort, Pivot, Condat}
	for _, k := range []int{2, 4, 8, 16, 20, 32, 160, 729, 15625} {
		br := newBenchRows(k, 1)
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			var spent [3]time.Duration
			const chunk = 16
			rows := 0
			for b.Loop() {
				for a, alg := range algs {
					t0 := time.Now()
					for i := 0; i < chunk; i++ {
						br.sparsemaxRow(alg, rows+i)
					}
					spent[a] += time.Since(t0)
				}
				rows += chunk
			}
			for a, alg := range algs {
				b.ReportMetric(float64(spent[a].Nanoseconds())/float64(rows), alg.String()+"-ns/row")
			}
			b.ReportMetric(float64(spent[1])/float64(spent[0]), "pivot/sort")
			b.ReportMetric(float64(spent[2])/float64(spent[0]), "condat/sort")
		})
	}
}

// BenchmarkEntmax: forward + backward per row for softmax and entmax.
func BenchmarkEntmax(b *testing.B) {
	for _, k := range benchSizes {
		br := newBenchRows(k, 1)
		run := func(name string, fwd func(p, z []float32), alpha float64) {
			b.Run(fmt.Sprintf("K=%d/%s", k, name), func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					r := i % len(br.z)
					fwd(br.p, br.z[r])
					EntmaxJVP(br.grad, br.p, br.v[r], alpha)
				}
			})
		}
		run("softmax", func(p, z []float32) { Softmax(p, z, nil) }, 1)
		run("entmax1.5-sort", func(p, z []float32) { entmax15Sort(p, z, nil) }, 1.5)
		run("entmax1.5-auto", func(p, z []float32) { Entmax(p, z, nil, 1.5) }, 1.5)
		run("entmax1.5-bisect", func(p, z []float32) { EntmaxBisect(p, z, nil, 1.5) }, 1.5)
		run("entmax1.25-bisect", func(p, z []float32) { Entmax(p, z, nil, 1.25) }, 1.25)
	}
}

// maxSink keeps the max reduction of BenchmarkSparsemaxVsMax alive.
var maxSink float32

// maxRow is the yardstick: one plain pass that finds the largest entry.
func maxRow(z []float32) float32 {
	m := z[0]
	for _, v := range z[1:] {
		if v > m {
			m = v
		}
	}
	return m
}

// BenchmarkSparsemaxVsMax times, interleaved in one loop over the same
// rows, the default Sparsemax (forward only), Spmax, and a plain max
// reduction at K = 15,625 (the 5^6 action grid), and reports ns/row for
// each and the ratios to the max reduction. condat-full is Condat on every
// entry (the path Auto took before the max - 1 prefilter), for reference.
// Each figure is the median over chunks of 8 rows, so that a chunk slowed
// by another process on a shared machine does not move the ratios.
func BenchmarkSparsemaxVsMax(b *testing.B) {
	const k = 15625
	for _, scale := range []float64{1, 5} {
		br := newBenchRows(k, scale)
		scratch := make([]float32, k)
		b.Run(fmt.Sprintf("K=%d/scale=%g", k, scale), func(b *testing.B) {
			ops := []func(z []float32){
				func(z []float32) { Sparsemax(br.p, z, nil) },
				func(z []float32) { Spmax(z, nil, scratch) },
				func(z []float32) { maxSink += maxRow(z) },
				func(z []float32) { SparsemaxWith(Condat, br.p, z, nil) },
			}
			const chunk = 8
			spent := make([][]time.Duration, len(ops))
			rows := 0
			for b.Loop() {
				for o, op := range ops {
					t0 := time.Now()
					for i := 0; i < chunk; i++ {
						op(br.z[(rows+i)%len(br.z)])
					}
					spent[o] = append(spent[o], time.Since(t0))
				}
				rows += chunk
			}
			ns := func(o int) float64 {
				slices.Sort(spent[o])
				return float64(spent[o][len(spent[o])/2].Nanoseconds()) / chunk
			}
			sm, sp, mx, cf := ns(0), ns(1), ns(2), ns(3)
			b.ReportMetric(sm, "sparsemax-ns/row")
			b.ReportMetric(sp, "spmax-ns/row")
			b.ReportMetric(mx, "max-ns/row")
			b.ReportMetric(cf, "condat-full-ns/row")
			b.ReportMetric(sm/mx, "sparsemax/max")
			b.ReportMetric(sp/mx, "spmax/max")
		})
	}
}

// BenchmarkSparsemaxSupport: the learner's threshold search (SparsemaxSupport) per row of
// N(0, sd^2) logits: sd 0.05 and 0.17 put every logit of the row within 1 of its maximum, as an
// untrained head does (0.17 is the spread of the training-step benchmark's 3^6 rows, whose
// support is about 18); 2 is a peaked, trained row. ns/op is ns per row.
func BenchmarkSparsemaxSupport(b *testing.B) {
	for _, k := range []int{729, 15625} {
		for _, sd := range []float64{0.05, 0.17, 2} {
			rng := newRNG(uint64(k))
			rows := make([][]float32, 64)
			for r := range rows {
				rows[r] = make([]float32, k)
				for i := range rows[r] {
					rows[r][i] = float32(sd * rng.NormFloat64())
				}
			}
			scratch, idx := make([]float32, k), make([]int32, k)
			b.Run(fmt.Sprintf("K=%d/sd=%v", k, sd), func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					SparsemaxSupport(rows[i%len(rows)], 1, scratch, idx)
				}
			})
		}
	}
}

// BenchmarkRowSumExpStore times, alternately, soft PCL's pass of exponentials as the learner runs
// it at 5^6 (SoftRowStatsExpRange, the rows' maxima known): 2,525 rows of 15,625 logits of an
// untrained policy (N(0, 1)), 158 MB read and 158 MB written, so the rows come from memory, not
// cache. It reports the pass's ms with each exponential and fused/matched.
func BenchmarkRowSumExpStore(b *testing.B) {
	const rows, k = 2525, 15625
	rng := newRNG(7)
	h, e := make([]float32, rows*k), make([]float32, rows*k)
	for i := range h {
		h[i] = float32(rng.NormFloat64())
	}
	hi, lo := make([]float32, rows), make([]float32, rows)
	for r := range rows {
		hi[r], lo[r] = slices.Max(h[r*k:(r+1)*k]), slices.Min(h[r*k:(r+1)*k])
	}
	var spent [2]time.Duration
	for b.Loop() {
		for x, kind := range []RowExp{ExpMatched, ExpFused} {
			t0 := time.Now()
			for r := range rows {
				if _, ok := SoftRowStatsExpRange(h[r*k:(r+1)*k], 1, hi[r], lo[r], true, e[r*k:(r+1)*k], kind); !ok {
					b.Fatal("row refused")
				}
			}
			spent[x] += time.Since(t0)
		}
	}
	n := float64(b.N) * 1e6
	b.ReportMetric(float64(spent[0])/n, "matched-ms")
	b.ReportMetric(float64(spent[1])/n, "fused-ms")
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "fused/matched")
}
