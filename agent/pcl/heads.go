package pcl

import (
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
	Algo string
	Form string
	// Alpha is the regularisation weight (tau for soft); Q is the Tsallis entropic index.
	Alpha, Q float64
	// Sizes are the widths of the heads in order.
	Sizes []int
	// VHead, LambdaHead and BigHead index the V head and the two multiplier heads (-1: absent).
	VHead, LambdaHead, BigHead int
	// SparseGrad, when not nil, receives the gradient of head 0 of sparse PCL in the separate form
	// as sparse rows (the support and the taken action of each row, in row order) instead of
	// dHeads[0], which Objective.Evaluate then leaves at 0 rows. A network whose output layer
	// takes a sparse gradient sets it; every other algorithm and form ignores it.
	SparseGrad *nn.SparseRows
}

// NewHeads returns the head layout of cfg's algorithm and form for numActions actions.
func NewHeads(cfg config.Config, numActions int) Heads {
	h := Heads{Algo: cfg.Algo, Form: cfg.Form, Alpha: cfg.Alpha, Q: cfg.TsallisQ, VHead: -1, LambdaHead: -1, BigHead: -1}
	switch cfg.Algo {
	case config.AlgoSoft:
		h.Q = 1
	case config.AlgoSparse:
		h.Q = 2
	}
	h.Sizes = []int{numActions}
	if cfg.Form == config.FormSeparate {
		h.VHead = len(h.Sizes)
		h.Sizes = append(h.Sizes, 1)
	}
	if cfg.Algo != config.AlgoSoft {
		h.LambdaHead = len(h.Sizes)
		h.Sizes = append(h.Sizes, 1)
	}
	if cfg.Algo == config.AlgoSparse {
		h.BigHead = len(h.Sizes)
		h.Sizes = append(h.Sizes, 1)
	}
	return h
}

// NumActions is the width of head 0.
func (m *Heads) NumActions() int { return m.Sizes[0] }

// Logits writes the policy logits z of one row of head 0 into dst (Q/alpha in the unified form).
// The greedy action is their argmax.
func (m *Heads) Logits(dst, head []float32) {
	if m.Form == config.FormUnified {
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
	tau, _ := policy.Entmax(p, z, nil, m.Q)
	return tau
}

// rowValue is V of one row: the V head (separate) or alpha * value-operator(z) (unified).
func (m *Heads) rowValue(heads []*tensor.Matrix, row int, z, p []float32) float64 {
	if m.VHead >= 0 {
		return float64(heads[m.VHead].Data[row])
	}
	return m.Alpha * policy.EntmaxConjugateFromProbs(z, p, nil, m.Q)
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
	clear(dz)
	var c float64
	switch m.Algo {
	case config.AlgoSoft:
		// log pi(a) = z_a - logsumexp(z); tau is the logsumexp.
		logp := float64(z[a]) - tau
		c = -m.Alpha * logp
		if w != 0 {
			for b := range p {
				g := float64(p[b])
				if b == a {
					g -= 1
				}
				dz[b] = float32(w * m.Alpha * g)
			}
		}
	case config.AlgoSparse:
		r := policy.SparseStep(dz, policy.SparseRow[float32]{Z: z, P: p, Tau: tau}, a, m.Alpha,
			head(heads, m.LambdaHead, row), head(heads, m.BigHead, row), w)
		c = r.Value
		if w != 0 {
			dHeads[m.LambdaHead].Data[row] += float32(w * r.DHeadLambda)
			dHeads[m.BigHead].Data[row] += float32(w * r.DHeadBig)
		}
	default:
		r := policy.TsallisStep(dz, policy.SparseRow[float32]{Z: z, P: p, Tau: tau}, a, m.Q, m.Alpha, head(heads, m.LambdaHead, row), w)
		c = r.Value
		if w != 0 {
			dHeads[m.LambdaHead].Data[row] += float32(w * r.DLogScale)
		}
	}
	if w != 0 {
		m.addLogitGrad(dHeads[0].Row(row), dz)
	}
	return c
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
	if m.Form == config.FormUnified {
		s = float32(1 / m.Alpha)
	}
	for i, v := range dz {
		dst[i] += s * v
	}
}
