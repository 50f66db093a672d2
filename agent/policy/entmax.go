package policy

import (
	"fmt"
	"math"
	"slices"
)

// Entmax writes alpha-entmax(z) into dst:
//
//	p_i = relu((alpha-1) z_i - tau)^(1/(alpha-1)),  tau such that sum p = 1,
//
// and returns tau (in the coordinates of z, so alpha = 2 gives the sparsemax
// threshold G(z)) and the support size. alpha = 1 is softmax (tau is then
// LogSumExp(z) and the support is every usable entry), alpha = 2 is
// sparsemax (computed by Sparsemax), alpha = 1.5 uses the exact sort
// algorithm of Peters et al. (2019) for rows shorter than Entmax15SortMaxK,
// any other alpha > 1 uses bisection
// polished by Newton steps. alpha < 1 or NaN panics (a programming error:
// alpha is a configuration value). Masking, -Inf, NaN and the scratch use of
// dst behave as in Sparsemax.
func Entmax[T Float](dst, z []T, valid []bool, alpha float64) (tau float64, support int) {
	checkRow("Entmax", len(z), len(dst), valid)
	switch {
	case !(alpha >= 1):
		panic(fmt.Sprintf("policy.Entmax: alpha must be >= 1, got %v", alpha))
	case alpha == 1:
		return softmaxLSE(dst, z, valid)
	case alpha == 2:
		return Sparsemax(dst, z, valid)
	case alpha == 1.5 && len(z) < Entmax15SortMaxK:
		return entmax15Sort(dst, z, valid)
	}
	return EntmaxBisect(dst, z, valid, alpha)
}

// Entmax15SortMaxK is the row length below which Entmax uses the exact
// sort algorithm for alpha = 1.5; from it on, bisection + Newton is faster
// (BenchmarkEntmax: sort wins at K = 20, bisection at K = 160 and above).
const Entmax15SortMaxK = 64

// EntmaxBisect is Entmax by root finding for any alpha > 1 (including 1.5
// and 2, for cross-checks). The threshold is bracketed in
// [max x - 1, max x - n^(1-alpha)] with x = (alpha-1) z, bisected with the
// test f(mid) >= 0 (deep-spin/entmax PR #32), and, for alpha <= 2 where f is
// convex, finished with Newton steps from the left, which cannot overshoot.
// Entries that fall below the lower end of the bracket are dropped from the
// candidate set as it moves. The probabilities are renormalised at the end.
func EntmaxBisect[T Float](dst, z []T, valid []bool, alpha float64) (tau float64, support int) {
	checkRow("EntmaxBisect", len(z), len(dst), valid)
	if !(alpha > 1) {
		panic(fmt.Sprintf("policy.EntmaxBisect: alpha must be > 1, got %v", alpha))
	}
	n, m, bad := gather(dst, z, valid)
	if bad || n == 0 {
		fillNaN(dst)
		return math.NaN(), 0
	}
	am1 := alpha - 1
	beta := 1 / am1
	lo := entmaxThreshold(dst[:n], m, alpha)
	var sum float64
	k := 0
	for i := range z {
		if !usable(z, valid, i) {
			dst[i] = 0
			continue
		}
		var p float64
		if r := am1*(float64(z[i])-m) - lo; r > 0 {
			p = powBeta(r, beta)
			k++
		}
		sum += p
		dst[i] = T(p)
	}
	inv := 1 / sum
	for i := range dst {
		if dst[i] != 0 {
			dst[i] = T(float64(dst[i]) * inv)
		}
	}
	return lo + am1*m, k
}

// entmaxThreshold finds the threshold t of f(t) = sum relu(x_i - t)^beta - 1 over the usable
// logits cand (x = (alpha-1)*(z - m), max x = 0; cand is reordered as the search compacts it):
// by bisection, finished by Newton's method for alpha <= 2.
func entmaxThreshold[T Float](cand []T, m, alpha float64) float64 {
	am1 := alpha - 1
	beta := 1 / am1
	n := len(cand)
	f := func(t float64) (float64, float64) { // value and -derivative/beta
		var s, d float64
		for _, v := range cand {
			if r := am1*(float64(v)-m) - t; r > 0 {
				pw := powBeta(r, beta)
				s += pw
				d += pw / r
			}
		}
		return s - 1, d
	}
	lo, hi := -1.0, -math.Pow(float64(n), -am1)
	bisections := 100
	if alpha <= 2 {
		bisections = newtonAfter
	}
	for it := 0; it < bisections && hi-lo > 1e-16; it++ {
		mid := lo + (hi-lo)/2
		if v, _ := f(mid); v >= 0 {
			lo = mid
			cand = compact(cand, m, am1, lo)
		} else {
			hi = mid
		}
	}
	if alpha > 2 {
		return lo
	}
	for it := 0; it < 60; it++ {
		v, d := f(lo)
		if v <= 0 || d == 0 {
			break
		}
		step := v / (beta * d)
		next := min(lo+step, hi)
		if !(next > lo) {
			break
		}
		lo = next
		cand = compact(cand, m, am1, lo)
		if step <= 1e-15*math.Max(1, math.Abs(lo)) {
			break
		}
	}
	return lo
}

// newtonAfter is the number of bisection steps before Newton takes over
// when alpha <= 2 (f convex, so Newton from the left converges
// monotonically); each step costs one pass of powers over the candidates.
const newtonAfter = 6

// compact keeps the candidates whose shifted value exceeds t.
func compact[T Float](cand []T, m, am1, t float64) []T {
	w := 0
	for _, v := range cand {
		if am1*(float64(v)-m) > t {
			cand[w] = v
			w++
		}
	}
	return cand[:w]
}

// powBeta is r^beta with the common exponents done without math.Pow.
func powBeta(r, beta float64) float64 {
	switch beta {
	case 1:
		return r
	case 2:
		return r * r
	case 0.5:
		return math.Sqrt(r)
	case 3:
		return r * r * r
	case 4:
		r2 := r * r
		return r2 * r2
	}
	return math.Pow(r, beta)
}

// entmax15Sort is the exact sort-based 1.5-entmax (Peters, Niculae and
// Martins 2019): with y = (z - max z)/2 sorted descending, tau_j = mean_j -
// sqrt((1 - ss_j)/j) and the support is the prefix where tau_j <= y_(j).
func entmax15Sort[T Float](dst, z []T, valid []bool) (float64, int) {
	n, m, bad := gather(dst, z, valid)
	if bad || n == 0 {
		fillNaN(dst)
		return math.NaN(), 0
	}
	buf := dst[:n]
	slices.Sort(buf)
	var s, sq, tauK float64
	k := 0
	for j := 1; j <= n; j++ {
		y := (float64(buf[n-j]) - m) / 2
		s += y
		sq += y * y
		fj := float64(j)
		mean := s / fj
		ss := fj * (sq/fj - mean*mean)
		delta := (1 - ss) / fj
		t := mean - math.Sqrt(math.Max(delta, 0))
		if t <= y {
			k, tauK = j, t
		} else {
			break
		}
	}
	var sum float64
	for i := range z {
		if !usable(z, valid, i) {
			dst[i] = 0
			continue
		}
		var p float64
		if r := (float64(z[i])-m)/2 - tauK; r > 0 {
			p = r * r
		}
		sum += p
		dst[i] = T(p)
	}
	inv := 1 / sum
	for i := range dst {
		dst[i] = T(float64(dst[i]) * inv)
	}
	return tauK + m/2, k
}

// EntmaxJVP writes J v into dst, where J = diag(g) - g g^T / sum(g) with
// g = p^(2-alpha) on the support (0 elsewhere) is the Jacobian of
// alpha-entmax at the probabilities p (alpha = 1: softmax, alpha = 2:
// sparsemax). J is symmetric, so this is also the VJP. dst may alias v.
func EntmaxJVP[T Float](dst, p, v []T, alpha float64) {
	checkRow("EntmaxJVP", len(p), len(dst), nil)
	checkRow("EntmaxJVP", len(p), len(v), nil)
	var sg, sgv float64
	for i := range p {
		if p[i] > 0 {
			g := gAlpha(float64(p[i]), alpha)
			sg += g
			sgv += g * float64(v[i])
		}
	}
	c := 0.0
	if sg > 0 {
		c = sgv / sg
	}
	for i := range p {
		if p[i] > 0 {
			dst[i] = T(gAlpha(float64(p[i]), alpha) * (float64(v[i]) - c))
		} else {
			dst[i] = 0
		}
	}
}

// gAlpha is p^(2-alpha), the diagonal weight of the entmax Jacobian.
func gAlpha(p, alpha float64) float64 {
	switch alpha {
	case 1:
		return p
	case 1.5:
		return math.Sqrt(p)
	case 2:
		return 1
	}
	return math.Pow(p, 2-alpha)
}

// TsallisEntropy returns H_alpha(p) = (1 - sum p_i^alpha)/(alpha (alpha-1)),
// the regulariser whose conjugate is EntmaxConjugate (alpha = 1: Shannon
// entropy -sum p log p; alpha = 2: (1 - |p|^2)/2, the sparse Tsallis entropy
// of the paper).
func TsallisEntropy[T Float](p []T, alpha float64) float64 {
	if alpha == 1 {
		var h float64
		for _, v := range p {
			if v > 0 {
				h -= float64(v) * math.Log(float64(v))
			}
		}
		return h
	}
	var s float64
	for _, v := range p {
		if v > 0 {
			s += powAlpha(float64(v), alpha)
		}
	}
	return (1 - s) / (alpha * (alpha - 1))
}

func powAlpha(p, alpha float64) float64 {
	switch alpha {
	case 2:
		return p * p
	case 1.5:
		return p * math.Sqrt(p)
	}
	return math.Pow(p, alpha)
}

// EntmaxConjugate returns the value operator of the alpha-Tsallis
// regularised problem, Omega*_alpha(z) = max_p <p, z> + H_alpha(p), which is
// LogSumExp at alpha = 1 and Spmax at alpha = 2. Its gradient is
// Entmax(z, alpha). The value of a state is temp*EntmaxConjugate(Q/temp).
// scratch needs len(z) elements.
func EntmaxConjugate[T Float](z []T, valid []bool, alpha float64, scratch []T) float64 {
	if alpha == 1 {
		return LogSumExp(z, valid)
	}
	_, k := Entmax(scratch[:len(z)], z, valid, alpha)
	if k == 0 {
		return math.NaN()
	}
	return EntmaxConjugateFromProbs(z, scratch[:len(z)], valid, alpha)
}

// EntmaxConjugateFromProbs is EntmaxConjugate given p = Entmax(z, alpha):
// <p, z - max z> + H_alpha(p) + max z.
func EntmaxConjugateFromProbs[T Float](z, p []T, valid []bool, alpha float64) float64 {
	m, s, ok := supportSum("EntmaxConjugateFromProbs", z, p, valid, func(pi, y float64) float64 { return pi * y })
	if !ok {
		return math.NaN()
	}
	return m + s + TsallisEntropy(p, alpha)
}
