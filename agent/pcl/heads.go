package pcl

import (
	"fmt"
	"math"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/policy"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Heads is the output layout that every network family (the LSTM of the algorithmic tasks, the
// feed-forward networks of continuous control) produces for one algorithm and form, and the
// algebra that turns head outputs into the policy, V and the per-step consistency terms. Each head
// is a matrix with one row per step.
//
// Layout (index: width):
//
//	separate: 0 logits |A|, 1 V, then multipliers
//	unified:  0 Q |A| (logits z = Q/alpha, V = alpha * value-operator(z)), then multipliers
//	multipliers: sparse: log-scale of lambda (1), Lambda pre-sigmoid (1); tsallis: log-scale (1); soft: none.
type Heads struct {
	// Algo is the regulariser, chosen once from the config.
	Algo Algorithm
	// Unified is the single-Q form: head 0 is Q and V is derived from it.
	Unified bool
	// Alpha is the regularisation weight (tau for soft). It is held here only: the objective, the
	// unified form's Q/alpha and the samplers read it from the heads; SetAlpha changes it.
	Alpha float64
	// Sizes are the widths of the heads in order.
	Sizes []int
	// VHead, LambdaHead and BigHead index the V head and the two multiplier heads (-1: absent).
	VHead, LambdaHead, BigHead int
	// SparseGrad, when not nil, receives the gradient of head 0 of sparse PCL (either form) as
	// sparse rows (the support and the taken action of each row, in row order) instead of
	// dHeads[0], which Objective.Evaluate then leaves at 0 rows. A network whose output layer
	// takes a sparse gradient sets it (see TakesSparseGrad); every other algorithm ignores it.
	SparseGrad *nn.SparseRows
	// ScaledGrad, when not nil, receives the gradient of head 0 of soft PCL (either form) as one
	// factor per row and the taken action's entry (see nn.RowScaled) over the row's exponentials,
	// which Objective.Evaluate leaves in dHeads[0] instead of the gradient written out. A network
	// whose output layer takes that form sets it (see TakesScaledGrad); the objective's reference
	// path writes the gradient out and leaves ScaledGrad at 0 rows.
	ScaledGrad *nn.RowScaled
	// Range, when not nil and Valid, is the range of each row of head 0 as the product that
	// computed it reported it (tensor.RowRange): soft PCL's first pass then takes the rows'
	// maxima from it instead of reading the rows for them. The network whose Forward produced
	// head 0 sets it (see TakesRowRange).
	Range *tensor.RowRange
	// Exp is the exponential of soft PCL's first pass when it keeps the rows' exponentials
	// (policy.RowExp). The zero value, policy.ExpMatched, keeps the reference path's bits up to
	// the order of the sums; a network sets policy.ExpFused where its results already part from
	// them (with ScaledGrad at its largest grids).
	Exp policy.RowExp
}

// NewHeads returns the head layout of the learner's algorithm, form and weight for numActions
// actions. An unknown algorithm or form is a config error.
func NewHeads(cfg config.LearnerConfig, numActions int) (Heads, error) {
	alg, err := NewAlgorithm(cfg)
	if err != nil {
		return Heads{}, err
	}
	if cfg.Form != config.FormSeparate && cfg.Form != config.FormUnified {
		return Heads{}, fmt.Errorf("config: form = %q: must be %q or %q", cfg.Form, config.FormSeparate, config.FormUnified)
	}
	if !(cfg.Alpha > 0) || math.IsInf(cfg.Alpha, 0) {
		return Heads{}, fmt.Errorf("config: alpha = %v: must be > 0 and finite", cfg.Alpha)
	}
	h := Heads{Algo: alg, Unified: cfg.Form == config.FormUnified, Alpha: cfg.Alpha, VHead: -1, LambdaHead: -1, BigHead: -1}
	h.Sizes = []int{numActions}
	if !h.Unified {
		h.VHead = len(h.Sizes)
		h.Sizes = append(h.Sizes, 1)
	}
	if alg.multiplierHeads() >= 1 {
		h.LambdaHead = len(h.Sizes)
		h.Sizes = append(h.Sizes, 1)
	}
	if alg.multiplierHeads() >= 2 {
		h.BigHead = len(h.Sizes)
		h.Sizes = append(h.Sizes, 1)
	}
	return h, nil
}

// SetAlpha changes the regularisation weight (alpha, or tau for soft PCL) of live heads: in the
// per-step terms, in the unified form's Q/alpha, and in the objective's "inverse-alpha" policy
// scale, all of which read it from here. It is what a weight schedule (the released code's
// tau_start/tau_decay) calls between steps.
func (m *Heads) SetAlpha(alpha float64) error {
	if !(alpha > 0) || math.IsInf(alpha, 0) {
		return fmt.Errorf("pcl: alpha %v, want > 0 and finite", alpha)
	}
	m.Alpha = alpha
	return nil
}

// NumActions is the width of head 0.
func (m *Heads) NumActions() int { return m.Sizes[0] }

// TakesSparseGrad reports that the objective can write head 0's gradient as sparse rows into
// SparseGrad: sparse PCL, whose logit gradient is non-zero only on the support and the taken
// action (in the unified form the value's gradient, the policy, is on the support too).
func (m *Heads) TakesSparseGrad() bool {
	_, sparse := m.Algo.(Sparse)
	return sparse
}

// TakesScaledGrad reports that the objective can write head 0's gradient as row factors into
// ScaledGrad: soft PCL, whose logit gradient is w·τ·(softmax − onehot(a)) (plus dV·softmax in the
// unified form), one factor per row on the row's exponentials and one entry at the taken action.
func (m *Heads) TakesScaledGrad() bool {
	_, soft := m.Algo.(Soft)
	return soft
}

// TakesRowRange reports that the objective's first pass reads the rows' maxima from Range: soft
// PCL (sparse PCL's threshold search needs the row's sum too, in its own order).
func (m *Heads) TakesRowRange() bool {
	_, soft := m.Algo.(Soft)
	return soft
}

// logitScale is the factor from head 0 to the logits: 1/alpha in the unified form, else 1.
func (m *Heads) logitScale() float32 {
	if m.Unified {
		return float32(1 / m.Alpha)
	}
	return 1
}

// Logits writes the policy logits z of one row of head 0 into dst (Q/alpha in the unified form).
// The greedy action is their argmax.
func (m *Heads) Logits(dst, head []float32) {
	if m.Unified {
		inv := float32(1 / m.Alpha)
		for i, q := range head {
			dst[i] = q * inv
		}
		return
	}
	copy(dst, head)
}

// Probs writes the policy of one row of head 0 into p (z is scratch of |A|) and returns the
// threshold tau that the step functions need (log-sum-exp for soft).
func (m *Heads) Probs(p, z, head0 []float32) float64 {
	m.Logits(z, head0)
	tau, _ := policy.Entmax(p, z, nil, m.Algo.Q())
	return tau
}

// SampleRow draws an action from the policy of one row of head 0 by inverting its cumulative
// distribution at the uniform number u (as policy.SampleWithUniform does) with the algorithm's
// row kernel, and returns the policy's largest probability and support size. ok is false when
// the row needs the reference path (Probs, then policy.SampleWithUniform): non-finite logits, or
// an algorithm without a row kernel. sc is the calling goroutine's scratch.
func (m *Heads) SampleRow(sc *RowScratch, head0 []float32, u float64) (action int, maxProb, support float32, ok bool) {
	return m.Algo.sampleRow(sc, head0, m.logitScale(), u)
}

// rowValue is V of one row: the V head (separate) or alpha * value-operator(z) (unified).
func (m *Heads) rowValue(heads []*tensor.Matrix, row int, z, p []float32) float64 {
	if m.VHead >= 0 {
		return float64(heads[m.VHead].Data[row])
	}
	return m.Alpha * policy.EntmaxConjugateFromProbs(z, p, nil, m.Algo.Q())
}

// head returns the scalar of head i at row, or 0 when the head is absent.
func head(heads []*tensor.Matrix, i, row int) float64 {
	if i < 0 {
		return 0
	}
	return float64(heads[i].Data[row])
}

// stepTerm evaluates the non-reward consistency term of one step and, with w != 0, accumulates
// w * d(term)/d(heads) into dHeads (dz is scratch; it is chained through the unified 1/alpha).
func (m *Heads) stepTerm(heads, dHeads []*tensor.Matrix, row, a int, z, p, dz []float32, tau, w float64) float64 {
	return m.Algo.stepTerm(m, heads, dHeads, row, a, z, p, dz, tau, w)
}

// addValueGrad adds g * dV/d(heads) of one row.
func (m *Heads) addValueGrad(dHeads []*tensor.Matrix, row int, p []float32, g float64) {
	if m.VHead >= 0 {
		dHeads[m.VHead].Data[row] += float32(g)
		return
	}
	// d(alpha * Omega*(Q/alpha))/dQ = grad Omega*(z) = p.
	dq := dHeads[0].Row(row)
	for i, pi := range p {
		dq[i] += float32(g * float64(pi))
	}
}

// addLogitGrad adds a gradient with respect to the logits z to head 0 (chained by 1/alpha when
// head 0 is Q).
func (m *Heads) addLogitGrad(dst, dz []float32) {
	s := float32(1)
	if m.Unified {
		s = float32(1 / m.Alpha)
	}
	for i, v := range dz {
		dst[i] += s * v
	}
}

// InitHeads applies cfg's head initialisations, shared by every network family: it scales the
// policy head's weights w and bias b by LogitInitScale, and with LambdaInit "alpha" sets the
// multiplier's log-scale bias lambdaBias (nil: no multiplier) to log alpha, so that exp(head)
// starts at the weight instead of at 1.
func InitHeads(cfg config.Config, w, b, lambdaBias *nn.Param) {
	if s := float32(cfg.LogitInitScale); s != 1 {
		for _, p := range []*nn.Param{w, b} {
			for k := range p.Value.Data {
				p.Value.Data[k] *= s
			}
		}
	}
	if lambdaBias != nil && cfg.LambdaInit == config.LambdaInitAlpha {
		for k := range lambdaBias.Value.Data {
			lambdaBias.Value.Data[k] = float32(math.Log(cfg.Alpha))
		}
	}
}
