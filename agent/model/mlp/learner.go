package mlp

import (
	"fmt"
	"math"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Learner is the PCL learner (pcl.Learner) over the feed-forward networks of Model, trained on
// batches of segments.
type Learner = pcl.Learner[*Segment, *Model]

// NewLearner builds the model (with cfg.NormObs, its observation normaliser) and its learner.
func NewLearner(cfg config.Config, dim, numActions int, eng *tensor.Engine) (*Learner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := New(cfg, dim, numActions, eng)
	if err != nil {
		return nil, err
	}
	if cfg.NormObs {
		m.Norm = NewNormalizer(dim)
	}
	return pcl.NewLearnerOf[*Segment](cfg, m)
}

// Diagnostics are a batch's value measurements (see runstore.Diagnostics for the columns they
// become): ValueMean is the mean V over the batch's states whose episode has ended (ReturnToGo
// known) and ReturnDiscounted the mean of their discounted returns; RegTerm is the mean per-step
// regularisation term at those states (the consistency's addition to the reward: with a steady
// policy V is about ReturnDiscounted + RegTerm/(1-γ)). All NaN when there are none.
type Diagnostics struct {
	ValueMean, ReturnDiscounted, RegTerm float64
}

// ValueDiagnostics measures segs, the batch of l's last Loss or TrainStep, from what that step's
// objective computed.
func ValueDiagnostics(l *Learner, segs []*Segment) Diagnostics {
	obj := l.Objective()
	var value, ret, term float64
	B, n := len(segs), 0
	for b, s := range segs {
		for t, g := range s.ReturnToGo {
			value += obj.Value(t*B + b)
			term += obj.Term(t*B + b)
			ret += g
			n++
		}
	}
	if n == 0 {
		return Diagnostics{math.NaN(), math.NaN(), math.NaN()}
	}
	return Diagnostics{value / float64(n), ret / float64(n), term / float64(n)}
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// ForwardBatch writes the (normalised) observations of segs as the input rows, time-major, and
// computes the heads (pcl.Network).
func (m *Model) ForwardBatch(segs []*Segment) ([]*tensor.Matrix, pcl.Steps, error) {
	st, err := m.encode(segs)
	if err != nil {
		return nil, pcl.Steps{}, err
	}
	heads, err := m.Forward(m.x)
	if err != nil {
		return nil, pcl.Steps{}, err
	}
	return heads, st, nil
}

// ForwardTrunk is ForwardBatch without the logits (pcl.FusedNetwork): it returns the logit
// layer's input rows and every other head.
func (m *Model) ForwardTrunk(segs []*Segment) (*tensor.Matrix, []*tensor.Matrix, pcl.Steps, error) {
	st, err := m.encode(segs)
	if err != nil {
		return nil, nil, pcl.Steps{}, err
	}
	x, heads, err := m.forward(m.x, false)
	if err != nil {
		return nil, nil, pcl.Steps{}, err
	}
	return x, heads, st, nil
}

// encode checks segs and writes their (normalised) observations as the input rows m.x,
// time-major, and their step layout.
func (m *Model) encode(segs []*Segment) (pcl.Steps, error) {
	B := len(segs)
	D := m.Dim
	T := 0
	for i, s := range segs {
		if err := s.Validate(D); err != nil {
			return pcl.Steps{}, fmt.Errorf("mlp: batch segment %d: %w", i, err)
		}
		T = max(T, s.Len())
	}
	Tn := T + 1
	if m.x == nil {
		m.x = tensor.New(0, D)
	}
	m.x.Reshape(Tn*B, D)
	clear(m.x.Data)
	st := &m.steps
	*st = pcl.Steps{T: T, B: B, Lengths: grow(st.Lengths, B), Terminated: grow(st.Terminated, B),
		Actions: grow(st.Actions, T*B), Rewards: grow(st.Rewards, T*B)}
	for b, s := range segs {
		L := s.Len()
		st.Lengths[b], st.Terminated[b] = L, s.Terminated
		for t := 0; t <= L; t++ {
			row := m.x.Data[(t*B+b)*D : (t*B+b+1)*D]
			obs := s.Obs[t*D : (t+1)*D]
			if m.Norm != nil {
				m.Norm.Apply(row, obs)
			} else {
				copy(row, obs)
			}
			if t < L {
				st.Actions[t*B+b], st.Rewards[t*B+b] = s.Actions[t], s.Rewards[t]
			}
		}
	}
	return *st, nil
}
