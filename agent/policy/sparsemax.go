package policy

import (
	"fmt"
	"math"
	"slices"
)

// Algorithm selects how the sparsemax threshold G(z) is found. All give the
// same threshold up to rounding; they differ only in speed.
type Algorithm int

const (
	// Auto picks Sort below AutoSelectionMinK usable actions and Condat at
	// and above it (the crossover measured by BenchmarkSparsemax).
	Auto Algorithm = iota
	// Sort sorts the logits: O(K log K), the textbook algorithm.
	Sort
	// Pivot is the randomised-pivot selection of Duchi et al. / Kiwiel:
	// expected O(K).
	Pivot
	// Condat is Condat's (2016) online filter followed by Michelot's
	// passes: O(K) in practice, no sorting.
	Condat
	// Bisect is bisection on the threshold (entmax with alpha = 2); it is
	// the slowest and exists as an independent check.
	Bisect
)

// AutoSelectionMinK is the number of usable actions from which Auto uses
// Condat's selection instead of sorting. Measured on the development
// machine with BenchmarkSparsemax (forward + JVP per row): see the package
// documentation for the figures.
const AutoSelectionMinK = 8

func (a Algorithm) String() string {
	switch a {
	case Auto:
		return "auto"
	case Sort:
		return "sort"
	case Pivot:
		return "pivot"
	case Condat:
		return "condat"
	case Bisect:
		return "bisect"
	}
	return fmt.Sprintf("Algorithm(%d)", int(a))
}

// Sparsemax writes sparsemax(z) = relu(z - G(z)) into dst and returns the
// threshold tau = G(z) (in the coordinates of z) and the support size
// (the number of strictly positive probabilities). dst is used as scratch,
// so it must not alias z. Masked and -Inf entries get probability 0 and are
// excluded: the result equals sparsemax of the subset of usable entries. A
// NaN or +Inf usable entry, or no usable entry, gives a NaN row, tau NaN and
// support 0. The maximum is subtracted before any arithmetic, so logits of
// 1e8 still give a valid distribution.
func Sparsemax[T Float](dst, z []T, valid []bool) (tau float64, support int) {
	return SparsemaxWith(Auto, dst, z, valid)
}

// SparsemaxWith is Sparsemax with an explicit threshold algorithm.
func SparsemaxWith[T Float](alg Algorithm, dst, z []T, valid []bool) (tau float64, support int) {
	checkRow("Sparsemax", len(z), len(dst), valid)
	ts, m, support := thresholdShifted(alg, z, valid, dst)
	if support == 0 {
		fillNaN(dst)
		return math.NaN(), 0
	}
	for i := range z {
		if !usable(z, valid, i) {
			dst[i] = 0
			continue
		}
		p := (float64(z[i]) - m) - ts
		if p < 0 {
			p = 0
		}
		dst[i] = T(p)
	}
	return ts + m, support
}

// SparsemaxThreshold returns the sparsemax threshold G(z) and the support
// size without writing the probabilities. scratch must hold at least len(z)
// elements; its contents are overwritten.
func SparsemaxThreshold[T Float](alg Algorithm, z []T, valid []bool, scratch []T) (tau float64, support int) {
	if len(scratch) < len(z) {
		panic(fmt.Sprintf("policy.SparsemaxThreshold: scratch has length %d, need %d", len(scratch), len(z)))
	}
	if valid != nil && len(valid) != len(z) {
		checkRow("SparsemaxThreshold", len(z), len(z), valid)
	}
	ts, m, k := thresholdShifted(alg, z, valid, scratch)
	if k == 0 {
		return math.NaN(), 0
	}
	return ts + m, k
}

// thresholdShifted returns the threshold of z - m, where m is the largest
// usable logit, together with m and the support size (0: no distribution).
func thresholdShifted[T Float](alg Algorithm, z []T, valid []bool, scratch []T) (ts, m float64, support int) {
	n, m, bad := gather(scratch, z, valid)
	if bad || n == 0 {
		return math.NaN(), 0, 0
	}
	buf := scratch[:n]
	if alg == Auto {
		alg = Sort
		if n >= AutoSelectionMinK {
			alg = Condat
		}
	}
	var t float64
	var k int
	switch alg {
	case Sort:
		t, k = thresholdSort(buf, m)
	case Pivot:
		t, k = thresholdPivot(buf, m)
	case Condat:
		t, k = thresholdCondat(buf, m)
	case Bisect:
		t, k = thresholdBisect(buf, m)
	default:
		panic(fmt.Sprintf("policy.SparsemaxThreshold: unknown algorithm %d", int(alg)))
	}
	return t, m, k
}

// thresholdSort works on shifted values y = z - m (computed in float64);
// it returns the shifted threshold and the support size.
func thresholdSort[T Float](buf []T, m float64) (float64, int) {
	slices.Sort(buf)
	var c, ck float64
	k := 0
	for j := 1; j <= len(buf); j++ {
		y := float64(buf[len(buf)-j]) - m
		c += y
		if 1+float64(j)*y > c {
			k, ck = j, c
		} else {
			break // the support test holds exactly on a prefix
		}
	}
	return (ck - 1) / float64(k), k
}

// thresholdPivot is the expected-O(K) pivot algorithm: U = buf[lo:hi] holds
// the undecided entries; accepted entries (known to be in the support) are
// summed into s and counted in rho.
func thresholdPivot[T Float](buf []T, m float64) (float64, int) {
	lo, hi := 0, len(buf)
	var s float64
	rho := 0
	rng := uint64(len(buf))*0x9E3779B97F4A7C15 + 1 // local, deterministic pivot stream
	for lo < hi {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		t := lo + int(rng%uint64(hi-lo))
		buf[lo], buf[t] = buf[t], buf[lo] // pivot at lo
		pv := float64(buf[lo]) - m
		// Partition buf[lo+1:hi] so entries >= pivot come first.
		g := lo + 1
		sumG := pv
		for i := lo + 1; i < hi; i++ {
			y := float64(buf[i]) - m
			if y >= pv {
				buf[g], buf[i] = buf[i], buf[g]
				sumG += y
				g++
			}
		}
		nG := g - lo
		if (s+sumG)-float64(rho+nG)*pv < 1 {
			s += sumG
			rho += nG
			lo = g
		} else {
			lo, hi = lo+1, g // G without the pivot
		}
	}
	return (s - 1) / float64(rho), rho
}

// thresholdCondat is Condat's algorithm (Math. Programming 2016, Fig. 2).
// The candidate list v and the waiting list vt share buf: vt = buf[:nt],
// v = buf[nt:nt+nv]. Entries are read in order; the write positions never
// overtake the read position.
func thresholdCondat[T Float](buf []T, m float64) (float64, int) {
	n := len(buf)
	nt, nv := 0, 1
	rho := float64(buf[0]) - m - 1
	for i := 1; i < n; i++ {
		y := float64(buf[i]) - m
		if y <= rho {
			continue
		}
		rho += (y - rho) / float64(nv+1)
		if rho > y-1 {
			buf[nt+nv] = buf[i]
			nv++
		} else {
			nt += nv // the whole of v goes to the waiting list
			buf[nt] = buf[i]
			nv = 1
			rho = y - 1
		}
	}
	if nt > 0 {
		// Compact the waiting entries that may still be in the support to
		// the front, then move v behind them.
		w := 0
		for i := 0; i < nt; i++ {
			y := float64(buf[i]) - m
			if y > rho {
				buf[w] = buf[i]
				w++
				rho += (y - rho) / float64(nv+w)
			}
		}
		copy(buf[w:], buf[nt:nt+nv])
		nv += w
	}
	// Michelot passes: drop entries at or below rho until none is dropped.
	v := buf[:nv]
	for {
		w := 0
		cnt := len(v)
		for i := range v {
			y := float64(v[i]) - m
			if y > rho {
				v[w] = v[i]
				w++
			} else {
				cnt--
				rho += (rho - y) / float64(cnt)
			}
		}
		if w == len(v) {
			break
		}
		v = v[:w]
	}
	// Recompute tau from the final support in one sum: the running update
	// accumulates rounding.
	var s float64
	for _, x := range v {
		s += float64(x) - m
	}
	return (s - 1) / float64(len(v)), len(v)
}

// thresholdBisect finds tau by bisection on f(t) = sum_i relu(y_i - t) - 1
// with tau in [-1, -1/n] (y has maximum 0), then solves exactly on the
// support it found.
func thresholdBisect[T Float](buf []T, m float64) (float64, int) {
	n := len(buf)
	lo, hi := -1.0, -1/float64(n)
	for it := 0; it < 100 && hi-lo > 1e-15; it++ {
		mid := lo + (hi-lo)/2
		var f float64
		for _, x := range buf {
			if y := float64(x) - m; y > mid {
				f += y - mid
			}
		}
		if f-1 >= 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	var s float64
	k := 0
	for _, x := range buf {
		if y := float64(x) - m; y > lo {
			s += y
			k++
		}
	}
	return (s - 1) / float64(k), k
}

// SparsemaxJVP writes J v into dst, where J = diag(s) - s s^T/k is the
// Jacobian of sparsemax at the probabilities p (s = 1[p > 0], k = |s|):
// (J v)_i = s_i (v_i - mean over the support of v). J is symmetric, so this
// is also the vector-Jacobian product used in backward passes. dst may
// alias v.
func SparsemaxJVP[T Float](dst, p, v []T) {
	checkRow("SparsemaxJVP", len(p), len(dst), nil)
	checkRow("SparsemaxJVP", len(p), len(v), nil)
	var sum float64
	k := 0
	for i := range p {
		if p[i] > 0 {
			sum += float64(v[i])
			k++
		}
	}
	mean := 0.0
	if k > 0 {
		mean = sum / float64(k)
	}
	for i := range p {
		if p[i] > 0 {
			dst[i] = T(float64(v[i]) - mean)
		} else {
			dst[i] = 0
		}
	}
}

// Spmax returns the sparse value operator
// spmax(z) = max_{p in simplex} <p, z> + (1 - |p|^2)/2
// over the usable entries, in its stable form m + sum_i p_i (y_i - p_i/2) + 1/2
// with y = z - max z. Its gradient is Sparsemax(z). The sparse value of a
// state is temp*Spmax(Q/temp). scratch needs len(z) elements.
func Spmax[T Float](z []T, valid []bool, scratch []T) float64 {
	ts, m, k := thresholdShifted(Auto, z, valid, scratch)
	if k == 0 {
		return math.NaN()
	}
	return spmaxFromThreshold(z, valid, ts, m)
}

// SpmaxFromProbs returns spmax(z) given p = Sparsemax(z) (already
// computed), with no scratch and no threshold search.
func SpmaxFromProbs[T Float](z, p []T, valid []bool) float64 {
	checkRow("SpmaxFromProbs", len(z), len(p), valid)
	m, n, bad := maxUsable(z, valid)
	if bad || n == 0 {
		return math.NaN()
	}
	var s float64
	for i := range z {
		if p[i] > 0 {
			pi := float64(p[i])
			s += pi * (float64(z[i]) - m - pi/2)
		}
	}
	return m + s + 0.5
}

func spmaxFromThreshold[T Float](z []T, valid []bool, ts, m float64) float64 {
	var s float64
	for i := range z {
		if !usable(z, valid, i) {
			continue
		}
		y := float64(z[i]) - m
		if p := y - ts; p > 0 {
			s += p * (y - p/2)
		}
	}
	return m + s + 0.5
}
