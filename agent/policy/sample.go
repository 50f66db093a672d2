package policy

import "math"

// Uniform is a source of uniform numbers in [0, 1): *math/rand.Rand and
// *math/rand/v2.Rand both satisfy it.
type Uniform interface {
	Float64() float64
}

// SampleWithUniform draws an action from the probabilities p (any of
// Softmax, Sparsemax, Entmax) by inverting the cumulative distribution at
// u in [0, 1). An action of probability 0 (masked or outside the support)
// is never returned, even when rounding leaves the cumulative sum below u.
// It returns -1 when p has no positive entry.
func SampleWithUniform[T Float](p []T, u float64) int {
	var c float64
	last := -1
	for i, v := range p {
		if !(v > 0) {
			continue
		}
		last = i
		c += float64(v)
		if u < c {
			return i
		}
	}
	return last
}

// Sample draws an action from p with the random source rng.
func Sample[T Float](p []T, rng Uniform) int {
	return SampleWithUniform(p, rng.Float64())
}

// Greedy returns the most probable action of softmax, sparsemax and entmax
// alike: the arg max of the usable logits (the lowest index on ties), or -1
// when no entry is usable. NaN logits are never chosen.
func Greedy[T Float](z []T, valid []bool) int {
	best := -1
	bv := math.Inf(-1)
	for i, v := range z {
		if valid != nil && !valid[i] {
			continue
		}
		f := float64(v)
		if f > bv || (best < 0 && f == bv && !math.IsInf(f, -1)) {
			best, bv = i, f
		}
	}
	return best
}

// SampleSoftmaxWithUniform draws an action from softmax(z/temp) by inverting its cumulative
// distribution at u in [0, 1), writing the distribution into dst (len(z)). It ranks every action
// by its logit, inside a sparse support or not, so it proposes the runners-up of a sparse policy
// far more often than a uniform draw does. temp must be > 0. It returns -1 when no logit is
// finite.
func SampleSoftmaxWithUniform[T Float](dst, z []T, temp, u float64) int {
	for i, v := range z {
		dst[i] = T(float64(v) / temp)
	}
	Softmax(dst, dst, nil)
	return SampleWithUniform(dst, u)
}
