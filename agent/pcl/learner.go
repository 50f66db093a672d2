package pcl

import (
	"errors"
	"fmt"
	"math"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/episode"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/nn/optim"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Learner trains a Model with the path-consistency loss and Adam.
type Learner struct {
	Cfg   config.Config
	Model *Model
	Opt   *optim.Adam

	// scratch reused across batches
	tokens  []int32
	lengths []int
	z, p    []float32
	tau     []float64
	dz      []float32
	in      PathInputs
	grads   PathGrads
	dHeads  []*tensor.Matrix
}

// ErrNonFinite marks a loss, gradient or parameter that became NaN or Inf.
var ErrNonFinite = errors.New("pcl: non-finite value")

// StepInfo reports one gradient step.
type StepInfo struct {
	Loss     float64 // (1/B) sum_rows C^2/2
	GradNorm float64 // global gradient norm before clipping
	Episodes int
	Steps    int
}

// NewLearner builds the model and its optimiser for cfg (which must be valid).
func NewLearner(cfg config.Config, spec Spec, eng *tensor.Engine) (*Learner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := NewModel(cfg, spec, eng)
	if err != nil {
		return nil, err
	}
	opt, err := optim.NewAdam(m.Net.Params(), optim.AdamConfig{LR: cfg.LearningRate, Beta1: cfg.AdamBeta1, Beta2: cfg.AdamBeta2, Epsilon: cfg.AdamEps})
	if err != nil {
		return nil, fmt.Errorf("pcl: optimiser: %w", err)
	}
	return &Learner{Cfg: cfg, Model: m, Opt: opt}, nil
}

// Params are the trainable parameters.
func (l *Learner) Params() []*nn.Param { return l.Model.Net.Params() }

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// policyScale is the factor on the gradient that reaches the per-step terms.
func (l *Learner) policyScale() float64 {
	if l.Cfg.PGScale == config.PGScaleInverseAlpha {
		return 1 / l.Cfg.Alpha
	}
	return 1
}

// Loss returns the path-consistency loss of eps; with grad it also leaves in the parameters'
// Grad the gradient of the training objective: the exact gradient of the loss, except that the
// part through the per-step terms is multiplied by the policy scale (1/alpha for "inverse-alpha")
// and the part through V by CriticWeight.
func (l *Learner) Loss(eps []*episode.Episode, grad bool) (StepInfo, error) {
	B := len(eps)
	if B == 0 {
		return StepInfo{}, fmt.Errorf("pcl: loss of an empty batch")
	}
	m := l.Model
	spec := m.Spec
	F, K := spec.Features(), spec.NumActions()
	T, steps := 0, 0
	for i, e := range eps {
		if err := e.Validate(); err != nil {
			return StepInfo{}, fmt.Errorf("pcl: batch episode %d: %w", i, err)
		}
		T = max(T, e.Len())
		steps += e.Len()
	}
	Tn := T + 1
	l.tokens = grow(l.tokens, Tn*B*F)
	clear(l.tokens)
	l.lengths = grow(l.lengths, B)
	for b, e := range eps {
		L := e.Len()
		l.lengths[b] = L + 1
		for t := 0; t <= L; t++ {
			row := l.tokens[(t*B+b)*F : (t*B+b+1)*F]
			o := int(e.Obs[t])
			if o < 0 || o >= spec.ObsVocab {
				return StepInfo{}, fmt.Errorf("pcl: batch episode %d: observation %d at step %d outside [0, %d)", b, o, t, spec.ObsVocab)
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
				return StepInfo{}, fmt.Errorf("pcl: batch episode %d: action %d at step %d outside [0, %d)", b, a, t, K)
			}
		}
	}
	heads, err := m.Net.Forward(l.tokens, Tn, B, l.lengths)
	if err != nil {
		return StepInfo{}, fmt.Errorf("pcl: forward: %w", err)
	}
	l.z = grow(l.z, Tn*B*K)
	l.p = grow(l.p, Tn*B*K)
	l.tau = grow(l.tau, Tn*B)
	l.dz = grow(l.dz, K)
	in := &l.in
	*in = PathInputs{T: T, B: B, Lengths: grow(in.Lengths, B), Terminated: grow(in.Terminated, B),
		Values: grow(in.Values, Tn*B), Rewards: grow(in.Rewards, T*B), Terms: grow(in.Terms, T*B)}
	clear(in.Values)
	clear(in.Rewards)
	clear(in.Terms)
	for b, e := range eps {
		L := e.Len()
		in.Lengths[b], in.Terminated[b] = L, e.Terminated
		for t := 0; t <= L; t++ {
			row := t*B + b
			z, p := l.z[row*K:(row+1)*K], l.p[row*K:(row+1)*K]
			l.tau[row] = m.Probs(p, z, heads[0].Row(row))
			in.Values[row] = m.rowValue(heads, row, z, p)
			if t < L {
				in.Rewards[row] = e.Rewards[t]
				in.Terms[row] = m.stepTerm(heads, nil, row, int(e.Actions[t]), z, p, l.dz, l.tau[row], 0)
			}
		}
	}
	var g *PathGrads
	if grad {
		g = &l.grads
	}
	loss, err := PathLoss(*in, l.Cfg.Gamma, l.Cfg.Rollout, g)
	info := StepInfo{Loss: loss, Episodes: B, Steps: steps}
	if err != nil {
		return info, err
	}
	if !grad {
		return info, nil
	}
	if len(l.dHeads) != len(heads) {
		l.dHeads = make([]*tensor.Matrix, len(heads))
		for i := range heads {
			l.dHeads[i] = tensor.New(0, heads[i].Cols)
		}
	}
	for i, h := range heads {
		l.dHeads[i].Reshape(h.Rows, h.Cols)
		l.dHeads[i].Zero()
	}
	ps, cw := l.policyScale(), l.Cfg.CriticWeight
	for b, e := range eps {
		L := e.Len()
		for t := 0; t <= L; t++ {
			row := t*B + b
			z, p := l.z[row*K:(row+1)*K], l.p[row*K:(row+1)*K]
			if t < L {
				if w := g.DTerms[row] * ps; w != 0 {
					m.stepTerm(heads, l.dHeads, row, int(e.Actions[t]), z, p, l.dz, l.tau[row], w)
				}
			}
			if dv := g.DValues[row] * cw; dv != 0 {
				m.addValueGrad(l.dHeads, row, p, dv)
			}
		}
	}
	nn.ZeroGrads(l.Params())
	if err := m.Net.Backward(l.dHeads); err != nil {
		return info, fmt.Errorf("pcl: backward: %w", err)
	}
	return info, nil
}

// TrainStep takes one clipped Adam step on eps. A non-finite loss or gradient leaves the
// parameters untouched and returns an error wrapping ErrNonFinite. A step that makes a parameter
// non-finite (an absurd learning rate) is also reported with ErrNonFinite; the parameters are then
// unusable and the caller must not save them.
func (l *Learner) TrainStep(eps []*episode.Episode) (StepInfo, error) {
	info, err := l.Loss(eps, true)
	if err != nil {
		if math.IsNaN(info.Loss) || math.IsInf(info.Loss, 0) {
			return info, fmt.Errorf("%w: path-consistency loss is %v", ErrNonFinite, info.Loss)
		}
		return info, err
	}
	info.GradNorm = optim.ClipGlobalNorm(l.Params(), l.Cfg.ClipNorm)
	if math.IsNaN(info.GradNorm) || math.IsInf(info.GradNorm, 0) {
		return info, fmt.Errorf("%w: gradient norm is %v (loss %v)", ErrNonFinite, info.GradNorm, info.Loss)
	}
	if err := l.Opt.Step(); err != nil {
		return info, fmt.Errorf("pcl: %w", err)
	}
	for _, p := range l.Params() {
		if i := p.Value.FirstNonFinite(); i >= 0 {
			return info, fmt.Errorf("%w: parameter %s[%d] is %v after the Adam step (learning rate %v)",
				ErrNonFinite, p.Name, i, p.Value.Data[i], l.Cfg.LearningRate)
		}
	}
	return info, nil
}
