package policy

import "math"

// The functions below are the float32 row passes of the learner's hot path: each reads a row of
// network outputs h and works on the logits z = scale*h (scale = 1, or 1/alpha when the row is
// Q), computed in float32 exactly as the callers of Softmax and Sparsemax compute them, without
// writing z out. They vectorise (C kernels when built with cgo on amd64) and use a float32 exp,
// so they agree with Softmax, LogSumExp and Sparsemax up to float32 rounding. A row with a NaN
// or infinite entry is refused (ok false): the callers then take the reference functions, which
// define what such rows give.

// SoftRow is what SoftRowStats keeps of a row: the maximum logit, the inverse of the sum of
// exp(z - M), and the log-sum-exp of the row.
type SoftRow struct {
	M, Inv float32
	LSE    float64
}

// SoftRowStats returns the softmax statistics of z = scale*h (scale > 0, h not empty), or ok
// false when an entry of h is NaN or infinite.
func SoftRowStats(h []float32, scale float32) (r SoftRow, ok bool) {
	m, _, ok := kRowMax(h, scale)
	if !ok {
		return SoftRow{}, false
	}
	s := kRowSumExp(h, scale, m)
	return SoftRow{M: m, Inv: float32(1 / s), LSE: float64(m) + math.Log(s)}, true
}

// SoftRowExp writes d_i = c * softmax(z)_i for the row r of SoftRowStats (c = 1: the policy).
func SoftRowExp(d, h []float32, scale float32, r SoftRow, c float32) {
	checkRow("SoftRowExp", len(h), len(d), nil)
	if len(h) == 0 {
		return
	}
	kRowExpScaled(d, h, scale, r.M, r.Inv, c)
}

// RowExp chooses the exponential of the passes that store a row's exponentials
// (SoftRowStatsExp, SoftRowStatsExpRange).
type RowExp uint8

const (
	// ExpMatched is f32.Exp's polynomial with every product and sum rounded apart: the bits of
	// SoftRowStats and SoftRowExp, which the reference path's Softmax matches up to rounding.
	ExpMatched RowExp = iota
	// ExpFused is the same polynomial with each multiply-add fused into one rounding: about 1.6
	// times faster with AVX2 and FMA, and as accurate, but with its own bits (the same on every
	// amd64 CPU in a cgo build). A caller takes it where its results already part from the
	// reference path's bits.
	ExpFused
)

// SoftRowStatsExp is SoftRowStats that also writes the row's exponentials into e (len(h)) as
// SoftRowScale takes them: with ExpMatched, SoftRowScale(e, r, c) then leaves in e what
// SoftRowExp(e, h, scale, r, c) would write, bit for bit, without computing the exponentials a
// second time. With ExpFused the statistics and e agree with those up to float32 rounding.
func SoftRowStatsExp(h []float32, scale float32, e []float32, x RowExp) (r SoftRow, ok bool) {
	checkRow("SoftRowStatsExp", len(h), len(e), nil)
	m, _, ok := kRowMax(h, scale)
	if !ok {
		return SoftRow{}, false
	}
	return softRowSumExp(h, scale, m, e, x), true
}

// softRowSumExp writes the exponentials of z - m into e and returns the row's statistics; m is
// the row's largest logit.
func softRowSumExp(h []float32, scale, m float32, e []float32, x RowExp) SoftRow {
	var s float64
	if x == ExpFused {
		s = kRowSumExpStoreFused(e, h, scale, m, false)
	} else {
		s = kRowSumExpStore(e, h, scale, m)
	}
	return SoftRow{M: m, Inv: float32(1 / s), LSE: float64(m) + math.Log(s)}
}

// SoftRowStatsExpRange is SoftRowStatsExp for a row whose largest and smallest entries of h
// (hmax, hmin) and whether all are numbers (finite) are known, as a product reports them
// (tensor.RowRange): it skips the pass that finds the maximum and returns the same bits with the
// same x. Scaling by scale > 0 is monotonic in float32, so the largest logit is fl(hmax*scale),
// and every logit is a number when h's entries are and its extremes stay finite once scaled.
func SoftRowStatsExpRange(h []float32, scale, hmax, hmin float32, finite bool, e []float32, x RowExp) (r SoftRow, ok bool) {
	checkRow("SoftRowStatsExpRange", len(h), len(e), nil)
	m, lo := hmax*scale, hmin*scale
	if !finite || !isFinite32(m) || !isFinite32(lo) {
		return SoftRow{}, false
	}
	return softRowSumExp(h, scale, m, e, x), true
}

// isFinite32 reports whether v is neither NaN nor infinite.
func isFinite32(v float32) bool { return v-v == 0 }

// SoftRowScale turns the exponentials SoftRowStatsExp wrote into e into c * softmax(z), in place.
func SoftRowScale(e []float32, r SoftRow, c float32) {
	if len(e) == 0 {
		return
	}
	kRowScale(e, r.Inv, c)
}

// MaxAndSupport returns the largest probability of the policy p (0 when none is positive) and
// the number of positive ones, in one vectorised pass. p must hold no NaN.
func MaxAndSupport(p []float32) (maxProb float32, support int) {
	if len(p) == 0 {
		return 0, 0
	}
	return kRowMaxPos(p)
}

// michelotStop is the candidate count below which SparsemaxSupport stops tightening its lower
// bound and solves exactly.
const michelotStop = 48

// SparsemaxSupport finds the sparsemax threshold of z = scale*h (scale > 0, h not empty): it
// returns the row maximum m, the threshold in shifted coordinates ts (G(z) = ts + m, the
// probabilities are p_i = float32(relu((z_i - m) - ts)), as Sparsemax writes them) and the
// support, the ascending indices with p_i > 0, in idx[:k] (idx needs len(h) entries; scratch
// too). ok is false when an entry of h is NaN or infinite.
//
// The candidates are narrowed before the exact solve: entries at or below a lower bound of the
// threshold have p = 0. The bound starts at m - 1 (the prefilter of Sparsemax) and is raised by
// Michelot's step t = (sum over the entries above the bound of (z - m) - 1)/count, a lower bound
// of ts for any such set, while that still removes candidates; each step is one vectorised
// count-and-sum pass. This matters while the logits are still flat (an untrained network puts all
// of a 15,625-action row within 1 of its maximum); once they spread, m - 1 alone leaves a few.
func SparsemaxSupport(h []float32, scale float32, scratch []float32, idx []int32) (m, ts float64, support []int32, ok bool) {
	mf, total, ok := kRowMax(h, scale)
	if !ok {
		return 0, 0, nil, false
	}
	m = float64(mf)
	margin := 1e-4 * math.Max(1, math.Abs(m))
	// The first bound: m - 1 (the prefilter of Sparsemax), or Michelot's step over the whole row
	// when that is higher (flat rows).
	bound := below[float32](m-1, m)
	if nb := float32(m + (total-float64(len(h))*m-1)/float64(len(h)) - margin); nb > bound {
		bound = nb
	}
	// Gather first: on a peaked row (a trained policy) the candidates are few, and the full-row
	// passes, which need their count and sum, do not run. The gather gives up as soon as the
	// candidates are too many for that (a flat row): writing out hundreds of indices that the
	// full-row passes then narrow costs more than those passes.
	k, few := kRowGatherAbove(h, scale, bound, idx, max(michelotStop, len(h)/128))
	if !few {
		bound, k = michelotFullRow(h, scale, mf, m, margin, bound, idx)
	}
	buf := scratch[:k]
	for j, i := range idx[:k] {
		buf[j] = h[i] * scale
	}
	// Then on the gathered candidates, compacting them (values and indices) at each step.
	for k > michelotStop {
		var sum float64
		for _, v := range buf {
			sum += float64(v) - m
		}
		nb := float32(m + (sum-1)/float64(k) - margin)
		if !(nb > bound) {
			break
		}
		w := 0
		for j, v := range buf {
			if v > nb {
				buf[w], idx[w] = v, idx[j]
				w++
			}
		}
		bound = nb
		small := 10*w > 9*k
		k, buf = w, buf[:w]
		if small {
			break
		}
	}
	ts, _ = thresholdAuto(buf, m)
	w := 0
	for _, i := range idx[:k] {
		if float32(relu((float64(h[i]*scale)-m)-ts)) > 0 {
			idx[w] = i
			w++
		}
	}
	return m, ts, idx[:w], true
}

// michelotFullRow tightens bound by Michelot steps over the whole row while the candidates above
// it are a large share of the row (flat rows), then gathers the candidates above the last bound
// into idx and returns that bound and their number.
func michelotFullRow(h []float32, scale, mf float32, m, margin float64, bound float32, idx []int32) (float32, int) {
	n, s := kRowCountSumAbove(h, scale, bound, mf)
	for n > max(michelotStop, len(h)/128) {
		nb := float32(m + (s-1)/float64(n) - margin)
		if !(nb > bound) {
			break
		}
		n2, s2 := kRowCountSumAbove(h, scale, nb, mf)
		bound = nb
		small := 10*n2 > 9*n
		n, s = n2, s2
		if small {
			break
		}
	}
	k, _ := kRowGatherAbove(h, scale, bound, idx, len(h))
	return bound, k
}

// SparseStepOnSupport is SparseStep for a row given by its threshold tau = G(z), its support size
// k and whether the taken action a is in the support (p_a > 0), instead of by its probabilities.
// Its gradient w*dc/dz is returned as two coefficients: shared on every b in the support, plus
// atA on a (added to shared when a is in the support).
func SparseStepOnSupport(za, tau float64, inSupport bool, k int, alpha, headLambda, headBigLambda, w float64) (r SparseStepResult, shared, atA float64) {
	r, scale := sparseTerms(za, tau, alpha, headLambda, headBigLambda)
	if k == 0 || w == 0 {
		return r, 0, 0
	}
	var cs, ca float64
	if inSupport {
		cs += alpha
		ca -= alpha
	}
	if tau > za {
		cs += scale
		ca -= scale
	}
	return r, w * cs / float64(k), w * ca
}
