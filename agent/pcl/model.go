package pcl

import (
	"fmt"
	"math"

	"github.com/sparsepcl/sparsepcl/agent/config"
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

// MeanSupport is the mean support size per step.
func (s Stats) MeanSupport() float64 { return s.SupportSum / math.Max(1, float64(s.Steps)) }

// MeanMaxProb is the mean probability of the most likely action per step.
func (s Stats) MeanMaxProb() float64 { return s.MaxProbSum / math.Max(1, float64(s.Steps)) }
