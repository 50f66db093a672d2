package pcl

import (
	"fmt"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Steps is a time-major batch of B step sequences (whole episodes or sub-episodes): row (t, b),
// at index t*B+b, is step t of sequence b, for t <= Lengths[b]; row (Lengths[b], b) is the state
// after the last action, from which a sequence that was not terminated bootstraps.
type Steps struct {
	T, B int
	// Lengths[b] is the number of actions L_b of sequence b, 1 <= L_b <= T.
	Lengths []int
	// Terminated[b] says sequence b ended in a terminal state; otherwise (truncated, or cut by the
	// sampler) it bootstraps from V at its last state.
	Terminated []bool
	// Actions and Rewards have T*B entries, valid for t < L_b.
	Actions []int32
	Rewards []float64
}

// Objective evaluates the path-consistency loss of a batch from the heads a network produced for
// it, and the loss gradient with respect to those heads. It is the part of the learner that every
// network family shares: the families differ only in how their inputs become heads and back.
type Objective struct {
	// Heads is the layout and the algebra of the heads, and holds the weight alpha.
	Heads *Heads
	// Gamma is the discount γ and Rollout the path length d of the consistencies.
	Gamma   float64
	Rollout int
	// CriticWeight multiplies the gradient that reaches V.
	CriticWeight float64
	// InverseAlpha multiplies the gradient that reaches the per-step terms by 1/alpha (pg_scale
	// "inverse-alpha", the released code's policy loss).
	InverseAlpha bool
	// Workers is the number of goroutines of the per-row passes (0: tensor.Workers(0)). The
	// results do not depend on it.
	Workers int
	// Reference makes Evaluate take the straightforward path: one goroutine, the policy of every
	// row written out in full, float64 softmax and dense gradients of head 0. It is the
	// definition the fast path is tested against, and the old path of the speed benchmarks.
	Reference bool
	// Targets, when not nil, are the bootstrap values of the next Evaluate ((T+1)*B, time-major,
	// from a lagged network): each consistency ends at γ^k·Targets[s+k] instead of γ^k·V(s+k),
	// and no gradient reaches them.
	Targets []float64
	// Episodes, when > 0, is the number of episodes the loss averages over in place of the
	// batch's B (PathInputs.Episodes): the fused output layer evaluates a batch by blocks.
	Episodes int

	trust trust // the trust region to a lagged policy (trust.go)

	z, p  []float32
	tau   []float64
	dz    []float32
	in    PathInputs
	grads PathGrads
	fast  fastState
}

// NewObjective returns the objective of the learner's section (gamma, rollout, critic weight,
// pg_scale, trust region) over heads h.
func NewObjective(cfg config.LearnerConfig, h *Heads) Objective {
	return Objective{Heads: h, Gamma: cfg.Gamma, Rollout: cfg.Rollout, CriticWeight: cfg.CriticWeight,
		InverseAlpha: cfg.PGScale == config.PGScaleInverseAlpha, trust: trust{Lambda: cfg.TrustRegion}}
}

// PolicyScale is the factor on the gradient that reaches the per-step terms.
func (o *Objective) PolicyScale() float64 {
	if o.InverseAlpha {
		return 1 / o.Heads.Alpha
	}
	return 1
}

// Evaluate returns the loss of s given heads ((T+1)*B rows each). With dHeads non-nil (one matrix
// per head, reshaped and overwritten here) it also writes the gradient of the training objective:
// the exact gradient of the loss, except that the part through the per-step terms is multiplied by
// the policy scale (1/alpha for "inverse-alpha") and the part through V by CriticWeight. When
// o.Heads.SparseGrad is set and the algorithm is sparse PCL, head 0's gradient
// goes there instead and dHeads[0] is left at 0 rows. When o.Heads.ScaledGrad is set and the
// algorithm is soft PCL, head 0's gradient is dHeads[0] scaled by the rows of ScaledGrad (see
// nn.RowScaled) when ScaledGrad has its rows, and dHeads[0] itself when it has 0.
func (o *Objective) Evaluate(heads []*tensor.Matrix, s Steps, dHeads []*tensor.Matrix) (float64, error) {
	m := o.Heads
	T, B := s.T, s.B
	Tn := T + 1
	if len(heads) != len(m.Sizes) {
		return 0, fmt.Errorf("pcl: %d heads, the layout has %d", len(heads), len(m.Sizes))
	}
	for i, h := range heads {
		if h.Rows != Tn*B || h.Cols != m.Sizes[i] {
			return 0, fmt.Errorf("pcl: head %d is %s, want %dx%d", i, h.Shape(), Tn*B, m.Sizes[i])
		}
	}
	if len(s.Lengths) != B || len(s.Terminated) != B || len(s.Actions) != T*B || len(s.Rewards) != T*B {
		return 0, fmt.Errorf("pcl: steps have %d lengths, %d flags, %d actions, %d rewards for T=%d B=%d",
			len(s.Lengths), len(s.Terminated), len(s.Actions), len(s.Rewards), T, B)
	}
	if m.ScaledGrad != nil {
		m.ScaledGrad.Reset(0) // until the fast path's gradient pass fills it
	}
	if o.Targets != nil && len(o.Targets) != Tn*B {
		return 0, fmt.Errorf("pcl: %d bootstrap targets for (T+1)*B = %d rows", len(o.Targets), Tn*B)
	}
	if lambda := o.trust.Lambda; lambda > 0 {
		if len(o.trust.Shifts) != Tn*B {
			return 0, fmt.Errorf("pcl: %d trust-region shifts for (T+1)*B = %d rows", len(o.trust.Shifts), Tn*B)
		}
		// The trust region's problem is the algorithm's with the weight α + λ (trust.go).
		saved := o.Heads
		o.trust.heads = *saved // kept in the objective: a local copy would escape at every call
		o.trust.heads.Alpha += lambda
		o.Heads = &o.trust.heads
		defer func() { o.Heads = saved }()
	}
	if o.Reference {
		return o.evaluateReference(heads, s, dHeads)
	}
	return o.evaluateFast(heads, s, dHeads)
}

// evaluateReference is Evaluate on the straightforward path (see Reference); heads and s have
// been checked.
func (o *Objective) evaluateReference(heads []*tensor.Matrix, s Steps, dHeads []*tensor.Matrix) (float64, error) {
	m := o.Heads
	T, B, K := s.T, s.B, m.NumActions()
	Tn := T + 1
	o.z = grow(o.z, Tn*B*K)
	o.p = grow(o.p, Tn*B*K)
	o.tau = grow(o.tau, Tn*B)
	o.dz = grow(o.dz, K)
	for b := range B {
		if L := s.Lengths[b]; L < 1 || L > T {
			return 0, fmt.Errorf("pcl: sequence %d has length %d, want 1..%d", b, L, T)
		}
	}
	in := o.resetInputs(s)
	for b := range B {
		L := s.Lengths[b]
		for t := 0; t <= L; t++ {
			row := t*B + b
			z, p := o.z[row*K:(row+1)*K], o.p[row*K:(row+1)*K]
			o.tau[row] = m.Probs(p, z, heads[0].Row(row))
			in.Values[row] = m.rowValue(heads, row, z, p)
			if t < L {
				a := int(s.Actions[row])
				if a < 0 || a >= K {
					return 0, fmt.Errorf("pcl: sequence %d: action %d at step %d outside [0, %d)", b, a, t, K)
				}
				in.Terms[row] = m.stepTerm(heads, nil, row, a, z, p, o.dz, o.tau[row], 0)
			}
		}
	}
	o.addTrustShifts(in)
	var g *PathGrads
	if dHeads != nil {
		g = &o.grads
	}
	loss, err := PathLoss(*in, o.Gamma, o.Rollout, g)
	if err != nil || dHeads == nil {
		return loss, err
	}
	if len(dHeads) != len(heads) {
		return loss, fmt.Errorf("pcl: %d head gradients for %d heads", len(dHeads), len(heads))
	}
	for i, h := range heads {
		dHeads[i].Reshape(h.Rows, h.Cols)
		dHeads[i].Zero()
	}
	ps, cw := o.PolicyScale(), o.CriticWeight
	for b := range B {
		L := s.Lengths[b]
		for t := 0; t <= L; t++ {
			row := t*B + b
			z, p := o.z[row*K:(row+1)*K], o.p[row*K:(row+1)*K]
			if t < L {
				if w := g.DTerms[row] * ps; w != 0 {
					m.stepTerm(heads, dHeads, row, int(s.Actions[row]), z, p, o.dz, o.tau[row], w)
				}
			}
			if dv := g.DValues[row] * cw; dv != 0 {
				m.addValueGrad(dHeads, row, p, dv)
			}
		}
	}
	return loss, nil
}

// resetInputs sizes and clears the path inputs for s (whose lengths have been checked) and copies
// its lengths, end flags and rewards; V and the step terms are left for the passes to write.
func (o *Objective) resetInputs(s Steps) *PathInputs {
	T, B := s.T, s.B
	in := &o.in
	*in = PathInputs{T: T, B: B, Lengths: grow(in.Lengths, B), Terminated: grow(in.Terminated, B),
		Values: grow(in.Values, (T+1)*B), Rewards: grow(in.Rewards, T*B), Terms: grow(in.Terms, T*B), Targets: o.Targets, Episodes: o.Episodes}
	clear(in.Values)
	clear(in.Rewards)
	clear(in.Terms)
	for b := range B {
		in.Lengths[b], in.Terminated[b] = s.Lengths[b], s.Terminated[b]
		for t := range s.Lengths[b] {
			in.Rewards[t*B+b] = s.Rewards[t*B+b]
		}
	}
	return in
}

// addTrustShifts adds the trust region's shifts to the step terms of in (no trust region: none).
func (o *Objective) addTrustShifts(in *PathInputs) {
	if o.trust.Lambda == 0 {
		return
	}
	for b := range in.B {
		for t := range in.Lengths[b] {
			in.Terms[t*in.B+b] += o.trust.Shifts[t*in.B+b]
		}
	}
}

// Probs returns the policy of row in the last Evaluate (valid until the next one; on the fast
// path, which does not write the policy out, it is computed here from the heads given to that
// Evaluate, which must not have changed since).
func (o *Objective) Probs(row int) []float32 {
	K := o.Heads.NumActions()
	if h := o.fast.head0; h != nil {
		// The fast path does not write the policy out: compute the row's.
		o.fast.probs = grow(o.fast.probs, 2*K)
		p, z := o.fast.probs[:K], o.fast.probs[K:]
		o.Heads.Probs(p, z, h.Row(row))
		return p
	}
	return o.p[row*K : (row+1)*K]
}

// Term returns the per-step regularisation term at row (a step before its sequence's end) as
// computed by the last Evaluate: what the consistency adds to the reward of that step.
func (o *Objective) Term(row int) float64 { return o.in.Terms[row] }

// Value returns V at row as computed by the last Evaluate: the V head in the separate form, the
// value operator of Q in the unified one (valid until the next Evaluate).
func (o *Objective) Value(row int) float64 { return o.in.Values[row] }
