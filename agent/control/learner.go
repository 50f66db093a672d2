package control

import (
	"fmt"
	"math"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/nn/optim"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Learner trains a Model on batches of segments with the path-consistency loss and Adam.
type Learner struct {
	Cfg   config.Config
	Model *Model
	Opt   optim.Optimizer
	// Norm normalises observations (nil: raw observations).
	Norm *Normalizer

	obj    pcl.Objective
	x      *tensor.Matrix
	steps  pcl.Steps
	dHeads []*tensor.Matrix
}

// NewLearner builds the model, its optimiser and (with cfg.NormObs) the observation normaliser.
func NewLearner(cfg config.Config, dim, numActions int, eng *tensor.Engine) (*Learner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := NewModel(cfg, dim, numActions, eng)
	if err != nil {
		return nil, err
	}
	opt, err := optim.New(cfg.Optimizer, m.Params(), optim.AdamConfig{LR: cfg.LearningRate, Beta1: cfg.AdamBeta1, Beta2: cfg.AdamBeta2, Epsilon: cfg.AdamEps})
	if err != nil {
		return nil, fmt.Errorf("control: optimiser: %w", err)
	}
	l := &Learner{Cfg: cfg, Model: m, Opt: opt, obj: pcl.NewObjective(cfg, &m.Heads), x: tensor.New(0, dim)}
	if cfg.NormObs {
		l.Norm = NewNormalizer(dim)
	}
	l.dHeads = make([]*tensor.Matrix, len(m.Sizes))
	for i, s := range m.Sizes {
		l.dHeads[i] = tensor.New(0, s)
	}
	return l, nil
}

// SetAlpha changes the regularisation weight of the live learner (see pcl.Heads.SetAlpha, which
// holds it).
func (l *Learner) SetAlpha(alpha float64) error { return l.Model.Heads.SetAlpha(alpha) }

// Alpha is the current regularisation weight (Cfg.Alpha is the one the learner was built with).
func (l *Learner) Alpha() float64 { return l.Model.Heads.Alpha }

// Params are the trainable parameters.
func (l *Learner) Params() []*nn.Param { return l.Model.Params() }

// StateParams are what a checkpoint holds besides Params: the optimiser state and the
// normaliser's statistics.
func (l *Learner) StateParams() []*nn.Param {
	ps := l.Opt.StateParams()
	if l.Norm != nil {
		ps = append(ps, l.Norm.Stats)
	}
	return ps
}

// Input writes the network input of the encoded observations obs (rows x Dim) into x, normalised
// when the learner normalises.
func (l *Learner) Input(x *tensor.Matrix, obs []float32) {
	x.Reshape(len(obs)/l.Model.Dim, l.Model.Dim)
	if l.Norm != nil {
		l.Norm.Apply(x.Data, obs)
		return
	}
	copy(x.Data, obs)
}

// Step is what one training step measured: the loss (pcl.StepInfo) and its diagnostics.
type Step struct {
	pcl.StepInfo
	Diagnostics
}

// Diagnostics are a step's value and gradient measurements (see train.Diagnostics for the columns
// they become).
type Diagnostics struct {
	// ValueMean is the mean V over the batch's states whose episode has ended (ReturnToGo known)
	// and ReturnDiscounted the mean of their discounted returns; RegTerm is the mean per-step
	// regularisation term at those states (the consistency's addition to the reward: with a
	// steady policy V is about ReturnDiscounted + RegTerm/(1-γ)). All NaN when there are none.
	ValueMean, ReturnDiscounted, RegTerm float64
	// ClipScale is the factor the global-norm clip applied (1 when it did not bind).
	ClipScale float64
	// GradNormPolicy and GradNormValue are the norms of the policy's and the value network's
	// gradients before clipping.
	GradNormPolicy, GradNormValue float64
}

// Loss returns the path-consistency loss of segs; with grad it also leaves the gradient of the
// training objective (see pcl.Objective) in the parameters' Grad.
func (l *Learner) Loss(segs []*Segment, grad bool) (pcl.StepInfo, error) {
	step, err := l.loss(segs, grad)
	return step.StepInfo, err
}

// loss is Loss with the value diagnostics of the batch.
func (l *Learner) loss(segs []*Segment, grad bool) (Step, error) {
	B := len(segs)
	if B == 0 {
		return Step{}, fmt.Errorf("control: loss of an empty batch")
	}
	D := l.Model.Dim
	T, n := 0, 0
	for i, s := range segs {
		if err := s.Validate(D); err != nil {
			return Step{}, fmt.Errorf("control: batch segment %d: %w", i, err)
		}
		T = max(T, s.Len())
		n += s.Len()
	}
	Tn := T + 1
	l.x.Reshape(Tn*B, D)
	clear(l.x.Data)
	st := &l.steps
	*st = pcl.Steps{T: T, B: B, Lengths: grow(st.Lengths, B), Terminated: grow(st.Terminated, B),
		Actions: grow(st.Actions, T*B), Rewards: grow(st.Rewards, T*B)}
	for b, s := range segs {
		L := s.Len()
		st.Lengths[b], st.Terminated[b] = L, s.Terminated
		for t := 0; t <= L; t++ {
			row := l.x.Data[(t*B+b)*D : (t*B+b+1)*D]
			obs := s.Obs[t*D : (t+1)*D]
			if l.Norm != nil {
				l.Norm.Apply(row, obs)
			} else {
				copy(row, obs)
			}
			if t < L {
				st.Actions[t*B+b], st.Rewards[t*B+b] = s.Actions[t], s.Rewards[t]
			}
		}
	}
	heads, err := l.Model.Forward(l.x)
	if err != nil {
		return Step{}, err
	}
	var dHeads []*tensor.Matrix
	if grad {
		dHeads = l.dHeads
	}
	loss, err := l.obj.Evaluate(heads, *st, dHeads)
	step := Step{StepInfo: pcl.StepInfo{Loss: loss, Episodes: B, Steps: n}, Diagnostics: Diagnostics{ClipScale: math.NaN(),
		GradNormPolicy: math.NaN(), GradNormValue: math.NaN()}}
	if err != nil {
		return step, err
	}
	step.ValueMean, step.ReturnDiscounted, step.RegTerm = l.valueAgainstReturns(segs)
	if !grad {
		return step, nil
	}
	nn.ZeroGrads(l.Params())
	if err := l.Model.Backward(dHeads); err != nil {
		return step, err
	}
	return step, nil
}

// valueAgainstReturns returns the means of V, of the discounted return and of the regularisation
// term, from the last Evaluate, over the states of segs whose discounted return is known (NaN
// when none is).
func (l *Learner) valueAgainstReturns(segs []*Segment) (value, ret, term float64) {
	B, n := len(segs), 0
	for b, s := range segs {
		for t, g := range s.ReturnToGo {
			value += l.obj.Value(t*B + b)
			term += l.obj.Term(t*B + b)
			ret += g
			n++
		}
	}
	if n == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	return value / float64(n), ret / float64(n), term / float64(n)
}

// TrainStep takes one clipped Adam step on segs. A non-finite loss, gradient or parameter is an
// error wrapping pcl.ErrNonFinite; for a non-finite loss or gradient the parameters are untouched.
func (l *Learner) TrainStep(segs []*Segment) (Step, error) {
	info, err := l.loss(segs, true)
	if err != nil {
		if math.IsNaN(info.Loss) || math.IsInf(info.Loss, 0) {
			return info, fmt.Errorf("%w: path-consistency loss is %v", pcl.ErrNonFinite, info.Loss)
		}
		return info, err
	}
	info.GradNormPolicy = optim.GlobalNorm(l.Model.PolicyParams())
	info.GradNormValue = optim.GlobalNorm(l.Model.ValueParams())
	info.GradNorm = optim.ClipGlobalNorm(l.Params(), l.Cfg.ClipNorm)
	info.ClipScale = 1
	if l.Cfg.ClipNorm > 0 && info.GradNorm > l.Cfg.ClipNorm {
		info.ClipScale = l.Cfg.ClipNorm / info.GradNorm
	}
	if math.IsNaN(info.GradNorm) || math.IsInf(info.GradNorm, 0) {
		return info, fmt.Errorf("%w: gradient norm is %v (loss %v)", pcl.ErrNonFinite, info.GradNorm, info.Loss)
	}
	if err := l.Opt.Step(); err != nil {
		return info, fmt.Errorf("control: %w", err)
	}
	for _, p := range l.Params() {
		if i := p.Value.FirstNonFinite(); i >= 0 {
			return info, fmt.Errorf("%w: parameter %s[%d] is %v after the Adam step (learning rate %v)",
				pcl.ErrNonFinite, p.Name, i, p.Value.Data[i], l.Cfg.LearningRate)
		}
	}
	return info, nil
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
