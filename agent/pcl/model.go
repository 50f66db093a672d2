package pcl

import (
	"fmt"
	"math"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/policy"
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
// need, and the algebra that turns head outputs into the policy, V and per-step consistency terms.
//
// Head layout (index: width):
//
//	separate: 0 logits |A|, 1 V (reads [c, h] like the reference value head), then multipliers
//	unified:  0 Q |A| (logits z = Q/alpha, V = alpha * value-operator(z)), then multipliers
//	multipliers: sparse: log-scale of lambda (1), Lambda pre-sigmoid (1); tsallis: log-scale (1); soft: none.
type Model struct {
	Spec Spec
	Algo string
	Form string
	// Alpha is the regularisation weight (tau for soft); Q is the Tsallis entropic index.
	Alpha, Q float64
	Net      *nn.SeqNet

	vHead, lamHead, bigHead int // -1 when absent
}

// NewModel builds the network for cfg on the task spec.
func NewModel(cfg config.Config, spec Spec, eng *tensor.Engine) (*Model, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	m := &Model{Spec: spec, Algo: cfg.Algo, Form: cfg.Form, Alpha: cfg.Alpha, Q: cfg.TsallisQ, vHead: -1, lamHead: -1, bigHead: -1}
	switch cfg.Algo {
	case config.AlgoSoft:
		m.Q = 1
	case config.AlgoSparse:
		m.Q = 2
	}
	sizes := []int{spec.NumActions()}
	state := []bool{false}
	if cfg.Form == config.FormSeparate {
		m.vHead = len(sizes)
		sizes, state = append(sizes, 1), append(state, true)
	}
	if cfg.Algo != config.AlgoSoft {
		m.lamHead = len(sizes)
		sizes, state = append(sizes, 1), append(state, false)
	}
	if cfg.Algo == config.AlgoSparse {
		m.bigHead = len(sizes)
		sizes, state = append(sizes, 1), append(state, false)
	}
	net, err := nn.NewSeqNet(nn.SeqNetConfig{InputVocabs: spec.InputVocabs(), Hidden: cfg.Hidden, HeadSizes: sizes, StateHeads: state, Seed: cfg.Seed, Engine: eng})
	if err != nil {
		return nil, fmt.Errorf("pcl: build network: %w", err)
	}
	m.Net = net
	return m, nil
}

// logits writes the policy logits z of one row into dst (Q/alpha in the unified form).
func (m *Model) logits(dst, head []float32) {
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
func (m *Model) Probs(p, z, head0 []float32) float64 {
	m.logits(z, head0)
	tau, _ := policy.Entmax(p, z, nil, m.Q)
	return tau
}

// rowValue is V of one row: the V head (separate) or alpha * value-operator(z) (unified).
func (m *Model) rowValue(heads []*tensor.Matrix, row int, z, p []float32) float64 {
	if m.vHead >= 0 {
		return float64(heads[m.vHead].Data[row])
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
func (m *Model) stepTerm(heads, dHeads []*tensor.Matrix, row, a int, z, p, dz []float32, tau, w float64) float64 {
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
			head(heads, m.lamHead, row), head(heads, m.bigHead, row), w)
		c = r.Value
		if w != 0 {
			dHeads[m.lamHead].Data[row] += float32(w * r.DHeadLambda)
			dHeads[m.bigHead].Data[row] += float32(w * r.DHeadBig)
		}
	default:
		r := policy.TsallisStep(dz, policy.SparseRow[float32]{Z: z, P: p, Tau: tau}, a, m.Q, m.Alpha, head(heads, m.lamHead, row), w)
		c = r.Value
		if w != 0 {
			dHeads[m.lamHead].Data[row] += float32(w * r.DLogScale)
		}
	}
	if w != 0 {
		m.addLogitGrad(dHeads[0].Row(row), dz)
	}
	return c
}

// addValueGrad adds g * dV/d(heads) of one row.
func (m *Model) addValueGrad(dHeads []*tensor.Matrix, row int, p []float32, g float64) {
	if m.vHead >= 0 {
		dHeads[m.vHead].Data[row] += float32(g)
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
func (m *Model) addLogitGrad(dst, dz []float32) {
	s := float32(1)
	if m.Form == config.FormUnified {
		s = float32(1 / m.Alpha)
	}
	for i, v := range dz {
		dst[i] += s * v
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
