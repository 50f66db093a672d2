package policy

import (
	"fmt"
	"math"
)

// Float is the element type of a logit row: the networks produce float32,
// the tabular oracle and the tests use float64. Every reduction is
// accumulated in float64 whatever T is.
type Float interface {
	~float32 | ~float64
}

// checkRow panics with a message naming the function when the slices of a
// row disagree in length. A length mismatch is a programming error in the
// caller (as in gonum's dimension checks), not bad user input.
func checkRow(fn string, k int, dst int, valid []bool) {
	if dst != k {
		panic(fmt.Sprintf("policy.%s: dst has length %d, logits have length %d", fn, dst, k))
	}
	if valid != nil && len(valid) != k {
		panic(fmt.Sprintf("policy.%s: mask has length %d, logits have length %d", fn, len(valid), k))
	}
}

// usable reports whether entry i takes part in the distribution: it is not
// masked out and it is not -Inf (a -Inf logit is the same as a masked action).
func usable[T Float](z []T, valid []bool, i int) bool {
	if valid != nil && !valid[i] {
		return false
	}
	return !math.IsInf(float64(z[i]), -1)
}

// gather copies the usable logits of z into buf (exact copies, no
// arithmetic; nothing when buf is nil) and returns how many there are and
// their maximum. bad is true when a usable logit is NaN or +Inf, for which no
// distribution exists.
func gather[T Float](buf, z []T, valid []bool) (n int, maxZ float64, bad bool) {
	maxZ = math.Inf(-1)
	for i, v := range z {
		if !usable(z, valid, i) {
			continue
		}
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 1) {
			return 0, 0, true
		}
		if f > maxZ {
			maxZ = f
		}
		if buf != nil {
			buf[n] = v
		}
		n++
	}
	return n, maxZ, false
}

// maxUsable returns the largest usable logit, the number of usable entries,
// and whether a usable entry is NaN or +Inf.
func maxUsable[T Float](z []T, valid []bool) (maxZ float64, n int, bad bool) {
	n, maxZ, bad = gather(nil, z, valid)
	return maxZ, n, bad
}

func fillNaN[T Float](dst []T) {
	nan := T(math.NaN())
	for i := range dst {
		dst[i] = nan
	}
}

// probsRowMax checks the row z and its probabilities p (a panic names fn when their lengths
// disagree) and returns the largest usable logit; ok is false when no entry is usable or one is
// NaN or +Inf.
func probsRowMax[T Float](fn string, z, p []T, valid []bool) (m float64, ok bool) {
	checkRow(fn, len(z), len(p), valid)
	m, n, bad := maxUsable(z, valid)
	return m, !bad && n > 0
}

// supportSum is the row maximum m of probsRowMax and the sum, over the support of p, of
// term(p_i, z_i − m), in index order: the shared part of the conjugates given p.
func supportSum[T Float](fn string, z, p []T, valid []bool, term func(pi, y float64) float64) (m, s float64, ok bool) {
	m, ok = probsRowMax(fn, z, p, valid)
	if !ok {
		return m, 0, false
	}
	for i := range z {
		if p[i] > 0 {
			s += term(float64(p[i]), float64(z[i])-m)
		}
	}
	return m, s, true
}
