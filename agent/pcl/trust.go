package pcl

import (
	"fmt"
	"math"

	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// The trust region to a lagged policy π̃ (docs/trust-region.md). Per state, the regularised
// objective ⟨π, Q⟩ + α·H(π) − λ·D(π, π̃) is the same problem as ⟨π, Q'⟩ + (α + λ)·H(π) up to a
// constant, for
//
//	soft (D = KL):          Q' = Q + λ·log π̃,                 H the Shannon entropy;
//	sparse (D = ½‖π − π̃‖²): Q' = Q + λ·π̃ − (λ/2)(1 + ‖π̃‖²),   H the sparse Tsallis entropy ½(1 − ‖π‖²).
//
// So each consistency keeps its form with the weight α + λ, and the step at (s, a) gains a shift
// that depends on the lagged policy alone: λ·log π̃(a|s) for soft, λ·π̃(a|s) − (λ/2)(1 + ‖π̃(s)‖²)
// for sparse. The shift is a constant to the online network; the weight reaches it as usual.

// trustAlgorithm is an algorithm with a trust region: Soft and Sparse.
type trustAlgorithm interface {
	// trustShift is the step shift at the taken action a of a row whose lagged policy is p
	// (logits z, threshold tau as Heads.Probs returns them), for the trust-region weight lambda.
	trustShift(p, z []float32, tau float64, a int, lambda float64) float64
}

// trustShift is λ·log π̃(a) = λ·(z_a − log-sum-exp z).
func (Soft) trustShift(_, z []float32, tau float64, a int, lambda float64) float64 {
	return lambda * (float64(z[a]) - tau)
}

// trustShift is λ·π̃(a) − (λ/2)(1 + ‖π̃‖²).
func (Sparse) trustShift(p, _ []float32, _ float64, a int, lambda float64) float64 {
	var sq float64
	for _, v := range p {
		sq += float64(v) * float64(v)
	}
	return lambda*float64(p[a]) - lambda/2*(1+sq)
}

// trust is the objective's trust region: its weight and the shifts of the next Evaluate.
type trust struct {
	// Lambda is the weight λ (0: no trust region).
	Lambda float64
	// Shifts are the per-step shifts ((T+1)*B, time-major; entries at bootstrap rows unused)
	// of the lagged policy, which the learner computes with the bootstrap values.
	Shifts []float64
}

// newTrust checks that the algorithm of h has a trust region.
func newTrust(lambda float64, h *Heads) (trust, error) {
	if lambda == 0 {
		return trust{}, nil
	}
	if _, ok := h.Algo.(trustAlgorithm); !ok || h.Unified {
		return trust{}, fmt.Errorf("pcl: a trust region needs soft or sparse PCL in the separate form, have %s (unified %v)", h.Algo.Name(), h.Unified)
	}
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return trust{}, fmt.Errorf("pcl: trust-region weight %v, want > 0 and finite", lambda)
	}
	return trust{Lambda: lambda}, nil
}

// laggedShifts writes the shift of every step row of s under the lagged heads into dst (grown to
// (T+1)*B) and returns it.
func laggedShifts(dst []float64, h *Heads, lambda float64, heads []*tensor.Matrix, s Steps) []float64 {
	alg := h.Algo.(trustAlgorithm)
	K, B := h.NumActions(), s.B
	dst = grow(dst, (s.T+1)*B)
	clear(dst)
	p, z := make([]float32, K), make([]float32, K)
	for b := range B {
		for t := range s.Lengths[b] {
			row := t*B + b
			tau := h.Probs(p, z, heads[0].Row(row))
			dst[row] = alg.trustShift(p, z, tau, int(s.Actions[row]), lambda)
		}
	}
	return dst
}
