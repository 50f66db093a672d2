package pcl

import (
	"fmt"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Algorithm is one PCL regulariser: the policy it implies (the entmax of entropic index Q: a
// softmax for Soft, a sparsemax for Sparse), the non-reward part of its per-step consistency and
// that part's gradient, and the multiplier heads the part reads. It is chosen once, when the heads
// are built (NewAlgorithm), and never compared by name afterwards: every per-row computation is a
// method of the algorithm. The three are Soft (soft.go), Sparse (sparse.go) and Tsallis
// (tsallis.go); the weight alpha is not part of the algorithm but of the heads (Heads.Alpha), so
// that it is held once and can change during training (Heads.SetAlpha).
type Algorithm interface {
	// Name is the algorithm as config.Config.Algo names it.
	Name() config.Algo
	// Q is the entropic index of the policy: 1 for the softmax, 2 for the sparsemax.
	Q() float64

	// multiplierHeads is the number of one-column multiplier heads after the logits and V: soft
	// none; Tsallis the log-scale of lambda; sparse the log-scale of lambda and the
	// pre-sigmoid of Lambda.
	multiplierHeads() int
	// stepTerm evaluates the non-reward consistency term of one step (row, taken action a) from
	// the row's logits z, policy p and threshold tau and, with w != 0, accumulates w * d(term)/d
	// (multiplier heads) into dHeads and w * d(term)/dz into dz (cleared first). This is the
	// reference definition the fast path is tested against.
	stepTerm(m *Heads, heads, dHeads []*tensor.Matrix, row, a int, z, p, dz []float32, tau, w float64) float64

	// densePolicy reports that the fast path writes every row's policy out as the reference does
	// (o.z, o.p, o.tau) instead of keeping row statistics.
	densePolicy() bool
	// fastValue is the fast path's first pass over one row (a < 0: the bootstrap row after the
	// last action): it writes V and the step term of the row into o.in and what the second pass
	// needs into o.fast.rows[row]. It returns false for a row with a non-finite output.
	fastValue(o *Objective, wk *rowWork, w int, heads []*tensor.Matrix, row, a int, scale float32) bool
	// fastGrad is the second pass over one row (not past its sequence's end): it writes the row
	// of head 0's gradient into d (nil when it goes to sink as sparse rows) and adds the
	// multiplier heads' and V's gradients, for the step weight wt (0 at the bootstrap row, a < 0)
	// and the value weight dv.
	fastGrad(o *Objective, wk *rowWork, heads, dHeads []*tensor.Matrix, sink *nn.SparseRows, row, a int, wt, dv float64, d []float32, scale float32)
	// sampleRow draws an action from the policy of the logits h*scale by inverting its
	// cumulative distribution at u, as policy.SampleWithUniform does, and returns the policy's
	// largest probability and support size; ok is false when the row needs the reference path
	// (non-finite logits, or an algorithm without a row kernel).
	sampleRow(sc *RowScratch, h []float32, scale float32, u float64) (action int, maxProb, support float32, ok bool)
}

// NewAlgorithm returns the algorithm that cfg.Algo names (cfg.TsallisQ is the entropic index of
// "tsallis"). An unknown name is a config error.
func NewAlgorithm(cfg config.LearnerConfig) (Algorithm, error) {
	switch cfg.Algo {
	case config.AlgoSoft:
		return Soft{}, nil
	case config.AlgoSparse:
		return Sparse{}, nil
	case config.AlgoTsallis:
		if !(cfg.TsallisQ > 1) {
			return nil, fmt.Errorf("config: tsallis_q = %v: must be > 1", cfg.TsallisQ)
		}
		return Tsallis{EntropicIndex: cfg.TsallisQ}, nil
	}
	return nil, fmt.Errorf("config: algo = %q: must be %q, %q or %q", cfg.Algo, config.AlgoSparse, config.AlgoSoft, config.AlgoTsallis)
}

// RowScratch is one goroutine's scratch for the row kernels of Heads.SampleRow.
type RowScratch struct {
	scratch, pv []float32
	idx         []int32
}
