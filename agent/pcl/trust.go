package pcl

import (
	"fmt"
	"math"

	"github.com/sparsepcl/sparsepcl/agent/policy"
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
	// laggedShift is the step shift at the taken action a of a row whose lagged logits are
	// h*scale, for the trust-region weight lambda, from the algorithm's row kernel (sc is the
	// calling goroutine's scratch); ok is false for a row with a non-finite logit.
	laggedShift(sc *RowScratch, h []float32, scale float32, a int, lambda float64) (shift float64, ok bool)
}

// laggedShift is λ·log π̃(a) = λ·(z_a − log-sum-exp z).
func (Soft) laggedShift(_ *RowScratch, h []float32, scale float32, a int, lambda float64) (float64, bool) {
	r, ok := policy.SoftRowStats(h, scale)
	return lambda * (float64(h[a]*scale) - r.LSE), ok
}

// laggedShift is λ·π̃(a) − (λ/2)(1 + ‖π̃‖²), over the lagged sparsemax's support.
func (Sparse) laggedShift(sc *RowScratch, h []float32, scale float32, a int, lambda float64) (float64, bool) {
	K := len(h)
	sc.scratch, sc.idx = grow(sc.scratch, K), grow(sc.idx, K)
	m, ts, sup, ok := policy.SparsemaxSupport(h, scale, sc.scratch, sc.idx)
	if !ok {
		return 0, false
	}
	var sq float64
	for _, i := range sup {
		p := relu((float64(h[i]*scale) - m) - ts)
		sq += p * p
	}
	pa := relu((float64(h[a]*scale) - m) - ts)
	return lambda*pa - lambda/2*(1+sq), true
}

// trust is the objective's trust region: its weight and the shifts of the next Evaluate.
type trust struct {
	// Lambda is the weight λ (0: no trust region).
	Lambda float64
	// Shifts are the per-step shifts ((T+1)*B, time-major; entries at bootstrap rows unused)
	// of the lagged policy, which the learner computes with the bootstrap values.
	Shifts []float64

	shifts shiftJob // laggedShifts' pass and its per-worker scratch
	heads  Heads    // the heads with the weight α + λ during an Evaluate
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

// laggedShifts writes the shift of every step row of s under the lagged heads into tr.Shifts
// (grown to (T+1)*B), the rows split over workers goroutines (0: tensor.Workers(0)).
func (tr *trust) laggedShifts(h *Heads, heads []*tensor.Matrix, s Steps, workers int) error {
	rows := (s.T + 1) * s.B
	tr.Shifts = grow(tr.Shifts, rows)
	clear(tr.Shifts)
	workers = tensor.Workers(workers)
	j := &tr.shifts
	if len(j.scratch) < workers {
		j.scratch, j.bad = make([]RowScratch, workers), make([]bool, workers)
	}
	clear(j.bad)
	j.alg, j.lambda, j.scale, j.head0, j.s, j.dst = h.Algo.(trustAlgorithm), tr.Lambda, h.logitScale(), heads[0], s, tr.Shifts
	tensor.ParallelRows(rows, rowBlock, workers, j)
	j.head0, j.s, j.dst = nil, Steps{}, nil
	for _, b := range j.bad {
		if b {
			return fmt.Errorf("pcl: the lagged policy has a non-finite logit")
		}
	}
	return nil
}

// shiftJob is laggedShifts' pass over the rows (a tensor.RowJob).
type shiftJob struct {
	alg     trustAlgorithm
	lambda  float64
	scale   float32
	head0   *tensor.Matrix
	s       Steps
	dst     []float64
	scratch []RowScratch // per worker
	bad     []bool       // per worker: a row with a non-finite logit
}

func (j *shiftJob) Rows(w, lo, hi int) {
	B := j.s.B
	for row := lo; row < hi; row++ {
		if t, b := row/B, row%B; t < j.s.Lengths[b] {
			var ok bool
			if j.dst[row], ok = j.alg.laggedShift(&j.scratch[w], j.head0.Row(row), j.scale, int(j.s.Actions[row]), j.lambda); !ok {
				j.bad[w] = true
			}
		}
	}
}
