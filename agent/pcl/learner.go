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
	Opt   optim.Optimizer

	obj Objective
	// scratch reused across batches
	tokens  []int32
	lengths []int
	steps   Steps
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
	opt, err := optim.New(cfg.Optimizer, m.Net.Params(), optim.AdamConfig{LR: cfg.LearningRate, Beta1: cfg.AdamBeta1, Beta2: cfg.AdamBeta2, Epsilon: cfg.AdamEps})
	if err != nil {
		return nil, fmt.Errorf("pcl: optimiser: %w", err)
	}
	return &Learner{Cfg: cfg, Model: m, Opt: opt, obj: NewObjective(cfg, &m.Heads)}, nil
}

// Params are the trainable parameters.
func (l *Learner) Params() []*nn.Param { return l.Model.Net.Params() }

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
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
	st := &l.steps
	*st = Steps{T: T, B: B, Lengths: grow(st.Lengths, B), Terminated: grow(st.Terminated, B),
		Actions: grow(st.Actions, T*B), Rewards: grow(st.Rewards, T*B)}
	for b, e := range eps {
		st.Lengths[b], st.Terminated[b] = e.Len(), e.Terminated
		for t, a := range e.Actions {
			st.Actions[t*B+b], st.Rewards[t*B+b] = a, e.Rewards[t]
		}
	}
	heads, err := m.Net.Forward(l.tokens, Tn, B, l.lengths)
	if err != nil {
		return StepInfo{}, fmt.Errorf("pcl: forward: %w", err)
	}
	var dHeads []*tensor.Matrix
	if grad {
		if len(l.dHeads) != len(heads) {
			l.dHeads = make([]*tensor.Matrix, len(heads))
			for i := range heads {
				l.dHeads[i] = tensor.New(0, heads[i].Cols)
			}
		}
		dHeads = l.dHeads
	}
	loss, err := l.obj.Evaluate(heads, *st, dHeads)
	info := StepInfo{Loss: loss, Episodes: B, Steps: steps}
	if err != nil || !grad {
		return info, err
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
