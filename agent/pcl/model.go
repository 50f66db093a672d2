package pcl

import (
	"fmt"
	"math"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/episode"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Spec describes the task a Model acts in: a Discrete observation of ObsVocab symbols and a combined
// Discrete action whose mixed-radix components (first least significant) are ActionComponents.
type Spec struct {
	ObsVocab         int
	ActionComponents []int
}

// NumActions is the product of the components.
func (s Spec) NumActions() int {
	n := 1
	for _, c := range s.ActionComponents {
		n *= c
	}
	return n
}

// Features is the number of input tokens per step: the observation and one per action component.
func (s Spec) Features() int { return 1 + len(s.ActionComponents) }

// InputVocabs are the embedding vocabularies: the observation, then each action component plus an
// explicit "none" (index = component size) for the previous action at episode start.
func (s Spec) InputVocabs() []int {
	v := []int{s.ObsVocab}
	for _, c := range s.ActionComponents {
		v = append(v, c+1)
	}
	return v
}

// PrevActionTokens writes the tokens of the previous action a (-1: none) into dst (len = components).
func (s Spec) PrevActionTokens(dst []int32, a int) {
	for i, c := range s.ActionComponents {
		if a < 0 {
			dst[i] = int32(c)
			continue
		}
		dst[i] = int32(a % c)
		a /= c
	}
}

func (s Spec) validate() error {
	if s.ObsVocab < 1 || len(s.ActionComponents) == 0 {
		return fmt.Errorf("pcl: spec needs an observation vocabulary and action components, have %+v", s)
	}
	for i, c := range s.ActionComponents {
		if c < 1 {
			return fmt.Errorf("pcl: action component %d has size %d", i, c)
		}
	}
	return nil
}

// Model is the recurrent network of the algorithmic tasks with the heads one algorithm and form
// need (see Heads for the layout and the algebra that turns head outputs into the policy, V and
// per-step consistency terms).
type Model struct {
	Heads
	Spec Spec
	Net  *nn.SeqNet

	// scratch of ForwardBatch, reused across batches
	tokens  []int32
	lengths []int
	steps   Steps
}

// NewModel builds the network for cfg on the task spec.
func NewModel(cfg config.Config, spec Spec, eng *tensor.Engine) (*Model, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	h, err := NewHeads(cfg, spec.NumActions())
	if err != nil {
		return nil, err
	}
	// V reads [c, h] like the reference value head.
	state := make([]bool, len(h.Sizes))
	if h.VHead >= 0 {
		state[h.VHead] = true
	}
	net, err := nn.NewSeqNet(nn.SeqNetConfig{InputVocabs: spec.InputVocabs(), Hidden: cfg.Hidden, HeadSizes: h.Sizes, StateHeads: state,
		EmbedStd: cfg.EmbedStd, Seed: cfg.Seed, Engine: eng})
	if err != nil {
		return nil, fmt.Errorf("pcl: build network: %w", err)
	}
	w, b := net.Head(0)
	var lambdaBias *nn.Param
	if h.LambdaHead >= 0 {
		_, lambdaBias = net.Head(h.LambdaHead)
	}
	InitHeads(cfg, w, b, lambdaBias)
	return &Model{Heads: h, Spec: spec, Net: net}, nil
}

// Layout is the model's heads (Network).
func (m *Model) Layout() *Heads { return &m.Heads }

// Params are the network's parameters.
func (m *Model) Params() []*nn.Param { return m.Net.Params() }

// StateParams is empty: the LSTM keeps no state besides its parameters.
func (m *Model) StateParams() []*nn.Param { return nil }

// ForwardBatch encodes eps (the observation and the previous action's components at every step,
// an explicit "none" at the start) and runs the LSTM over them (Network).
func (m *Model) ForwardBatch(eps []*episode.Episode) ([]*tensor.Matrix, Steps, error) {
	B := len(eps)
	spec := m.Spec
	F, K := spec.Features(), spec.NumActions()
	T := 0
	for i, e := range eps {
		if err := e.Validate(episode.TokenDim); err != nil {
			return nil, Steps{}, fmt.Errorf("pcl: batch episode %d: %w", i, err)
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
				return nil, Steps{}, fmt.Errorf("pcl: batch episode %d: observation %d at step %d outside [0, %d)", b, o, t, spec.ObsVocab)
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
				return nil, Steps{}, fmt.Errorf("pcl: batch episode %d: action %d at step %d outside [0, %d)", b, a, t, K)
			}
		}
	}
	st := &m.steps
	*st = Steps{T: T, B: B, Lengths: grow(st.Lengths, B), Terminated: grow(st.Terminated, B),
		Actions: grow(st.Actions, T*B), Rewards: grow(st.Rewards, T*B)}
	for b, e := range eps {
		st.Lengths[b], st.Terminated[b] = e.Len(), e.Terminated
		for t, a := range e.Actions {
			st.Actions[t*B+b], st.Rewards[t*B+b] = a, e.Rewards[t]
		}
	}
	heads, err := m.Net.Forward(m.tokens, Tn, B, m.lengths)
	if err != nil {
		return nil, Steps{}, fmt.Errorf("pcl: forward: %w", err)
	}
	return heads, *st, nil
}

// Backward accumulates the parameter gradients of dHeads (Network).
func (m *Model) Backward(dHeads []*tensor.Matrix) error { return m.Net.Backward(dHeads) }

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

// Stats summarises a policy over the visited states.
type Stats struct {
	Steps      int
	SupportSum float64 // sum over steps of |{a : pi(a) > 0}|
	MaxProbSum float64 // sum over steps of max_a pi(a)
}

// Add accumulates one distribution.
func (s *Stats) Add(p []float32) {
	k, mx := 0, float32(0)
	for _, v := range p {
		if v > 0 {
			k++
		}
		mx = max(mx, v)
	}
	s.Steps++
	s.SupportSum += float64(k)
	s.MaxProbSum += float64(mx)
}

// AddRow accumulates one distribution by its largest probability and support size (RowStats).
func (s *Stats) AddRow(maxProb, support float32) {
	s.Steps++
	s.SupportSum += float64(support)
	s.MaxProbSum += float64(maxProb)
}

// MeanSupport is the mean support size per step.
func (s Stats) MeanSupport() float64 { return s.SupportSum / math.Max(1, float64(s.Steps)) }

// MeanMaxProb is the mean probability of the most likely action per step.
func (s Stats) MeanMaxProb() float64 { return s.MaxProbSum / math.Max(1, float64(s.Steps)) }
