package pcl

import "math"

// Surpluses returns, for each sequence b of the last Evaluate, its largest surplus over the
// value: the maximum over its steps t of the whole-remainder path consistency
//
//	S(t) = sum_{k=t}^{L-1} gamma^(k-t) (r_k + term_k) + gamma^(L-t) V(s_L) - V(s_t),
//
// with V(s_L) = 0 for a terminated sequence. Under the policy and a consistent V, S(t) is zero in
// expectation; it is large where the sequence did much better than V expected, as an exploring
// step's rare rewarded action does. This is self-imitation learning's priority (the return above
// the value) in path consistency's own terms. dst is reused when large enough; the values are
// those of the heads given to Evaluate (before any step on them).
func (o *Objective) Surpluses(dst []float64) []float64 {
	in := &o.in
	dst = grow(dst, in.B)
	for b := range in.B {
		L := in.Lengths[b]
		tail := 0.0 // sum_{k>=t} gamma^(k-t) (r_k + term_k) + gamma^(L-t) V(s_L)
		if !in.Terminated[b] {
			tail = in.Values[L*in.B+b]
		}
		best := math.Inf(-1)
		for t := L - 1; t >= 0; t-- {
			row := t*in.B + b
			tail = in.Rewards[row] + in.Terms[row] + o.Gamma*tail
			best = max(best, tail-in.Values[row])
		}
		dst[b] = best
	}
	return dst
}
