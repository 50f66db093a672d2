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
	// Auto first narrows the row to the candidates z_i > max z - 1 (the
	// threshold lies in [max z - 1, max z), so no other entry can be in the
	// support) in the same pass that finds the maximum, then runs Sort on
	// fewer than AutoSelectionMinK candidates and Condat on more. It is the
	// fast path: at K = 15,625 with a few dozen candidates it costs about
	// one max reduction plus clearing the output (BenchmarkSparsemaxVsMax).
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

// AutoSelectionMinK is the number of candidates (usable actions above
// max z - 1) from which Auto uses Condat's selection instead of sorting.
// Measured on the development machine with BenchmarkSparsemax (forward +
// JVP per row): see the package documentation for the figures.
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
	if alg == Auto && len(z) <= indexLimit[T]() {
		return sparsemaxAuto(dst, z, valid)
	}
	ts, m, support := thresholdShifted(alg, z, valid, dst)
	if support == 0 {
		fillNaN(dst)
		return math.NaN(), 0
	}
	writeSparsemax(dst, z, valid, ts, m)
	return ts + m, support
}

// sparsemaxAuto is the Auto path of SparsemaxWith. When autoThreshold
// keeps the candidates' indices (in dst[:n]), the rest of dst is cleared
// and the probabilities are scattered to the candidates' positions, so the
// row is read once and written once by a memory clear. The indices are
// ascending (index >= slot), so scattering from the last slot down never
// overwrites an index not yet read.
func sparsemaxAuto[T Float](dst, z []T, valid []bool) (tau float64, support int) {
	ts, m, k, idx := autoThreshold(dst, z, valid)
	if k == 0 {
		fillNaN(dst)
		return math.NaN(), 0
	}
	if idx == nil {
		writeSparsemax(dst, z, valid, ts, m)
		return ts + m, k
	}
	clear(dst[len(idx):])
	for j := len(idx) - 1; j >= 0; j-- {
		i := int(idx[j])
		dst[j] = 0
		dst[i] = T(relu((float64(z[i]) - m) - ts))
	}
	return ts + m, k
}

// autoThreshold is the Auto threshold search: the candidates of the row
// (see candidates), solved by thresholdAuto. It returns the shifted
// threshold, m, the support size (0: no distribution) and, when there are
// at most len(z)/2 candidates, their indices, left in scratch[:n] with the
// values solved in scratch[n:2n]; with more, the values are solved in
// place and idx is nil. len(z) must not exceed indexLimit[T]().
func autoThreshold[T Float](scratch, z []T, valid []bool) (ts, m float64, k int, idx []T) {
	n, m, bad := candidates(scratch, z, valid)
	if bad || n == 0 {
		return math.NaN(), 0, 0, nil
	}
	buf := scratch[:n]
	if 2*n <= len(z) {
		idx, buf = scratch[:n], scratch[n:2*n]
	}
	for j := range buf {
		buf[j] = z[int(scratch[j])]
	}
	ts, k = thresholdAuto(buf, m)
	return ts, m, k, idx
}

// writeSparsemax writes relu(z - m - ts) at the usable entries of z and 0
// elsewhere. Every entry at or below lo gets 0 (with or without the exact
// arithmetic), so the exact formula runs on the few entries above it and
// the rest of the pass is a comparison and a store. The usable entries are
// finite or -Inf here, and -Inf <= lo.
func writeSparsemax[T Float](dst, z []T, valid []bool, ts, m float64) {
	lo := below[T](ts+m, m)
	if valid == nil {
		for i, v := range z {
			if v > lo {
				dst[i] = T(relu((float64(v) - m) - ts))
			} else {
				dst[i] = 0
			}
		}
		return
	}
	valid = valid[:len(z)]
	for i, v := range z {
		if valid[i] && v > lo {
			dst[i] = T(relu((float64(v) - m) - ts))
		} else {
			dst[i] = 0
		}
	}
}

func relu(x float64) float64 {
	if x < 0 {
		return 0
	}
	return x
}

// below returns a value of T at or below x by a margin that exceeds the
// rounding of x to T and of the float64 arithmetic on entries near m (m is
// the row maximum and |x| <= |m| + 1): an entry v <= below(x, m) has
// (v - m) - (x - m) <= 0 however it is rounded. Overflow gives -Inf, which
// only makes the caller test more entries exactly.
func below[T Float](x, m float64) T {
	return T(x - 1e-6*math.Max(1, math.Abs(m)))
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
// Auto solves on the candidates above max - 1 only; the named algorithms
// see every usable entry, so they stay independent references.
func thresholdShifted[T Float](alg Algorithm, z []T, valid []bool, scratch []T) (ts, m float64, support int) {
	if alg == Auto && len(z) <= indexLimit[T]() {
		ts, m, k, _ := autoThreshold(scratch, z, valid)
		return ts, m, k
	}
	n, m, bad := gather(scratch, z, valid)
	if bad || n == 0 {
		return math.NaN(), 0, 0
	}
	buf := scratch[:n]
	var t float64
	var k int
	switch alg {
	case Auto:
		t, k = thresholdAuto(buf, m)
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

// thresholdAuto sorts fewer than AutoSelectionMinK values and runs Condat
// on more.
func thresholdAuto[T Float](buf []T, m float64) (float64, int) {
	if len(buf) < AutoSelectionMinK {
		return thresholdSort(buf, m)
	}
	return thresholdCondat(buf, m)
}

// indexLimit is the longest row whose indices candidates can store exactly
// as values of T (2^24 for float32). Longer rows take the gather path.
func indexLimit[T Float]() int {
	if x := T(1 << 24); x+1 == x {
		return 1 << 24
	}
	return math.MaxInt // float64 holds every index up to 2^53
}

// candidates finds the entries that can be in the support. It writes into
// buf[:n], as values of T, the ascending indices of the usable logits above
// max - 1 (and of a few just below, by the margin of below), and returns n,
// the maximum m of all usable logits, and bad as gather does. The threshold
// satisfies max - 1 <= G(z) < max and an entry at or below the threshold
// gets probability 0, so the threshold and the support of the candidates
// are those of the whole row, whatever algorithm solves them.
//
// It is one pass that keeps a running maximum: an entry at or below the
// running bound (running max - 1) is skipped after one comparison, the work
// per entry of a max reduction; an entry above it is recorded, and the
// records are filtered against the final bound at the end. NaN fails the
// comparison v <= bound and so reaches the slow branch, where it is caught
// with +Inf; -Inf never gets past it (the bound starts at -Inf).
// len(z) must not exceed indexLimit[T]().
func candidates[T Float](buf, z []T, valid []bool) (n int, m float64, bad bool) {
	mT := T(math.Inf(-1))
	bound := mT
	// The two loops differ only in the mask test: the fast one, without a mask, is the hot path
	// of every sampling and training step, so it carries no per-entry test of valid.
	if valid == nil {
		for i, v := range z {
			if v <= bound {
				continue
			}
			if bad = record(buf, &n, i, v, &mT, &bound); bad {
				return 0, 0, true
			}
		}
	} else {
		valid = valid[:len(z)]
		for i, v := range z {
			if !valid[i] || v <= bound {
				continue
			}
			if bad = record(buf, &n, i, v, &mT, &bound); bad {
				return 0, 0, true
			}
		}
	}
	w := 0
	for _, x := range buf[:n] {
		if z[int(x)] > bound {
			buf[w] = x
			w++
		}
	}
	return w, float64(mT), false
}

// record is candidates' slow branch, for an entry v at index i above the running bound: it
// reports NaN and +Inf as bad, raises the running maximum and its bound, and appends i.
func record[T Float](buf []T, n *int, i int, v T, mT, bound *T) (bad bool) {
	if f := float64(v); math.IsNaN(f) || math.IsInf(f, 1) {
		return true
	}
	if v > *mT {
		*mT = v
		*bound = below[T](float64(v)-1, float64(v))
	}
	buf[*n] = T(i)
	*n++
	return false
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
	return thresholdOnSupport(v, m)
}

// thresholdOnSupport is the threshold of v (values, m their shift), a set that holds the
// support: tau = (sum over it of (v - m) - 1)/count, summed in the order of v, then the entries
// at or below tau dropped and tau taken again until none is. An entry exactly at the threshold
// (p = 0) can survive rounded updates before it; it does not change tau, so it is dropped and
// only strictly positive probabilities are counted. Condat's algorithm ends here with v in its
// input's order, so its threshold depends on the support and that order, not on which other
// entries it was given.
func thresholdOnSupport[T Float](v []T, m float64) (float64, int) {
	for {
		var s float64
		for _, x := range v {
			s += float64(x) - m
		}
		t := (s - 1) / float64(len(v))
		w := 0
		for _, x := range v {
			if float64(x)-m > t {
				v[w] = x
				w++
			}
		}
		if w == len(v) || w == 0 {
			return t, len(v)
		}
		v = v[:w]
	}
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
	t := (s - 1) / float64(k)
	// Entries exactly at the threshold (p = 0) lie above lo; they do not
	// change tau but are not in the support.
	pos := 0
	for _, x := range buf {
		if float64(x)-m > t {
			pos++
		}
	}
	return t, pos
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
	if len(z) > indexLimit[T]() {
		ts, m, k := thresholdShifted(Auto, z, valid, scratch)
		if k == 0 {
			return math.NaN()
		}
		return spmaxFromThreshold(z, valid, ts, m)
	}
	ts, m, k, idx := autoThreshold(scratch, z, valid)
	switch {
	case k == 0:
		return math.NaN()
	case idx == nil:
		return spmaxFromThreshold(z, valid, ts, m)
	}
	var s float64
	for _, x := range idx {
		y := float64(z[int(x)]) - m
		if p := y - ts; p > 0 {
			s += p * (y - p/2)
		}
	}
	return m + s + 0.5
}

// SpmaxFromProbs returns spmax(z) given p = Sparsemax(z) (already
// computed), with no scratch and no threshold search.
func SpmaxFromProbs[T Float](z, p []T, valid []bool) float64 {
	m, s, ok := supportSum("SpmaxFromProbs", z, p, valid, func(pi, y float64) float64 { return pi * (y - pi/2) })
	if !ok {
		return math.NaN()
	}
	return m + s + 0.5
}

// spmaxFromThreshold sums over the entries above below(tau) only, as
// SparsemaxWith writes its output (the others have p = 0).
func spmaxFromThreshold[T Float](z []T, valid []bool, ts, m float64) float64 {
	var s float64
	lo := below[T](ts+m, m)
	for i, v := range z {
		if v <= lo || (valid != nil && !valid[i]) {
			continue
		}
		y := float64(v) - m
		if p := y - ts; p > 0 {
			s += p * (y - p/2)
		}
	}
	return m + s + 0.5
}
