package lstm

import (
	"fmt"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/episode"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Model is the recurrent network of the algorithmic tasks with the heads one algorithm and form
// need (see pcl.Heads for the layout and the algebra that turns head outputs into the policy, V
// and per-step consistency terms). It is this family's pcl.Network.
type Model struct {
	pcl.Heads
	Spec Spec
	Net  *Net

	// scratch of ForwardBatch, reused across batches
	tokens  []int32
	lengths []int
	steps   pcl.Steps
}

// New builds the network for cfg on the task spec.
func New(cfg config.Config, spec Spec, eng *tensor.Engine) (*Model, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	h, err := pcl.NewHeads(cfg.LearnerConfig, spec.NumActions())
	if err != nil {
		return nil, err
	}
	// V reads [c, h] like the reference value head.
	state := make([]bool, len(h.Sizes))
	if h.VHead >= 0 {
		state[h.VHead] = true
	}
	net, err := NewNet(NetConfig{InputVocabs: spec.InputVocabs(), Hidden: cfg.Hidden, HeadSizes: h.Sizes, StateHeads: state,
		EmbedStd: cfg.EmbedStd, Seed: cfg.Seed, Engine: eng})
	if err != nil {
		return nil, fmt.Errorf("lstm: build network: %w", err)
	}
	w, b := net.Head(0)
	var lambdaBias *nn.Param
	if h.LambdaHead >= 0 {
		_, lambdaBias = net.Head(h.LambdaHead)
	}
	pcl.InitHeads(cfg, w, b, lambdaBias)
	return &Model{Heads: h, Spec: spec, Net: net}, nil
}

// Layout is the model's heads (pcl.Network).
func (m *Model) Layout() *pcl.Heads { return &m.Heads }

// Params are the network's parameters.
func (m *Model) Params() []*nn.Param { return m.Net.Params() }

// StateParams is empty: the LSTM keeps no state besides its parameters.
func (m *Model) StateParams() []*nn.Param { return nil }

// ForwardBatch encodes eps (the observation and the previous action's components at every step,
// an explicit "none" at the start) and runs the LSTM over them (pcl.Network).
func (m *Model) ForwardBatch(eps []*episode.Episode) ([]*tensor.Matrix, pcl.Steps, error) {
	B := len(eps)
	spec := m.Spec
	F, K := spec.Features(), spec.NumActions()
	T := 0
	for i, e := range eps {
		if err := e.Validate(episode.TokenDim); err != nil {
			return nil, pcl.Steps{}, fmt.Errorf("lstm: batch episode %d: %w", i, err)
		}
		T = max(T, e.Len())
	}
	Tn := T + 1
	m.tokens = grow(m.tokens, Tn*B*F)
	clear(m.tokens)
	m.lengths = grow(m.lengths, B)
	for b, e := range eps {
		L := e.Len()
		m.lengths[b] = L + 1
		for t := 0; t <= L; t++ {
			row := m.tokens[(t*B+b)*F : (t*B+b+1)*F]
			o := int(e.Obs[t])
			if o < 0 || o >= spec.ObsVocab {
				return nil, pcl.Steps{}, fmt.Errorf("lstm: batch episode %d: observation %d at step %d outside [0, %d)", b, o, t, spec.ObsVocab)
			}
			row[0] = int32(o)
			prev := -1
			if t > 0 {
				prev = int(e.Actions[t-1])
			}
			spec.PrevActionTokens(row[1:], prev)
		}
		for t, a := range e.Actions {
			if a < 0 || int(a) >= K {
				return nil, pcl.Steps{}, fmt.Errorf("lstm: batch episode %d: action %d at step %d outside [0, %d)", b, a, t, K)
			}
		}
	}
	st := &m.steps
	*st = pcl.Steps{T: T, B: B, Lengths: grow(st.Lengths, B), Terminated: grow(st.Terminated, B),
		Actions: grow(st.Actions, T*B), Rewards: grow(st.Rewards, T*B)}
	for b, e := range eps {
		st.Lengths[b], st.Terminated[b] = e.Len(), e.Terminated
		for t, a := range e.Actions {
			st.Actions[t*B+b], st.Rewards[t*B+b] = a, e.Rewards[t]
		}
	}
	heads, err := m.Net.Forward(m.tokens, Tn, B, m.lengths)
	if err != nil {
		return nil, pcl.Steps{}, fmt.Errorf("lstm: forward: %w", err)
	}
	return heads, *st, nil
}

// Backward accumulates the parameter gradients of dHeads (pcl.Network).
func (m *Model) Backward(dHeads []*tensor.Matrix) error { return m.Net.Backward(dHeads) }

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
