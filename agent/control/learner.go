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
	Opt   *optim.Adam
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
	opt, err := optim.NewAdam(m.Params(), optim.AdamConfig{LR: cfg.LearningRate, Beta1: cfg.AdamBeta1, Beta2: cfg.AdamBeta2, Epsilon: cfg.AdamEps})
	if err != nil {
		return nil, fmt.Errorf("control: optimiser: %w", err)
	}
	l := &Learner{Cfg: cfg, Model: m, Opt: opt, obj: pcl.Objective{Heads: &m.Heads, Cfg: cfg}, x: tensor.New(0, dim)}
	if cfg.NormObs {
		l.Norm = NewNormalizer(dim)
	}
	l.dHeads = make([]*tensor.Matrix, len(m.Sizes))
	for i, s := range m.Sizes {
		l.dHeads[i] = tensor.New(0, s)
	}
	return l, nil
}

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

// Loss returns the path-consistency loss of segs; with grad it also leaves the gradient of the
// training objective (see pcl.Objective) in the parameters' Grad.
func (l *Learner) Loss(segs []*Segment, grad bool) (pcl.StepInfo, error) {
	B := len(segs)
	if B == 0 {
		return pcl.StepInfo{}, fmt.Errorf("control: loss of an empty batch")
	}
	D := l.Model.Dim
	T, n := 0, 0
	for i, s := range segs {
		if err := s.Validate(D); err != nil {
			return pcl.StepInfo{}, fmt.Errorf("control: batch segment %d: %w", i, err)
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
		return pcl.StepInfo{}, err
	}
	var dHeads []*tensor.Matrix
	if grad {
		dHeads = l.dHeads
	}
	loss, err := l.obj.Evaluate(heads, *st, dHeads)
	info := pcl.StepInfo{Loss: loss, Episodes: B, Steps: n}
	if err != nil || !grad {
		return info, err
	}
	nn.ZeroGrads(l.Params())
	if err := l.Model.Backward(dHeads); err != nil {
		return info, err
	}
	return info, nil
}

// TrainStep takes one clipped Adam step on segs. A non-finite loss, gradient or parameter is an
// error wrapping pcl.ErrNonFinite; for a non-finite loss or gradient the parameters are untouched.
func (l *Learner) TrainStep(segs []*Segment) (pcl.StepInfo, error) {
	info, err := l.Loss(segs, true)
	if err != nil {
		if math.IsNaN(info.Loss) || math.IsInf(info.Loss, 0) {
			return info, fmt.Errorf("%w: path-consistency loss is %v", pcl.ErrNonFinite, info.Loss)
		}
		return info, err
	}
	info.GradNorm = optim.ClipGlobalNorm(l.Params(), l.Cfg.ClipNorm)
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
