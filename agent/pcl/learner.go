package pcl

import (
	"errors"
	"fmt"
	"math"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/nn/optim"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Network is a model family as the learner sees it: it turns a batch of step sequences of type T
// (whole episodes for the LSTM of the algorithmic tasks, sub-episodes for the MLPs of continuous
// control) into heads in its Layout, and head gradients into parameter gradients.
type Network[T any] interface {
	// Layout is the heads' layout and algebra; it holds the weight alpha.
	Layout() *Heads
	// ForwardBatch checks and encodes batch (not empty) and computes its heads, (T+1)*B rows
	// each, time-major, and the batch's step layout. The matrices and the Steps' slices belong
	// to the network and are valid until its next ForwardBatch; Backward needs what it kept.
	ForwardBatch(batch []T) ([]*tensor.Matrix, Steps, error)
	// Backward accumulates the parameter gradients of the head gradients dHeads of the last
	// ForwardBatch.
	Backward(dHeads []*tensor.Matrix) error
	// Params are the trainable parameters, in the checkpoint's order.
	Params() []*nn.Param
	// StateParams are the network's non-trainable state a checkpoint keeps after the optimiser's
	// (the observation normaliser's statistics; none for the LSTM).
	StateParams() []*nn.Param
}

// splitNetwork is a network with separate policy and value parameters, whose gradient norms
// TrainStep reports.
type splitNetwork interface {
	PolicyParams() []*nn.Param
	ValueParams() []*nn.Param
}

// Learner trains a network of either family with the path-consistency loss (Objective) and a
// clipped optimiser step. It is the one learner: the families differ only in their Network.
type Learner[T any, N Network[T]] struct {
	Model N
	Opt   optim.Optimizer

	cfg    config.Config
	obj    Objective
	dHeads []*tensor.Matrix
	target *target // nil: bootstrap from the network itself

	// Fused runs a gradient step of a FusedNetwork in the separate form through the fused output
	// layer (fused.go): the same values up to float rounding, without the logits written out.
	Fused bool
	// FusedBlock is the number of sequences in a block of the fused step (0: as many as make
	// about fusedBlockCells logits, at least one).
	FusedBlock int
	fused      *fusedState

	// Phase, when not nil, is called as each phase of a Loss with gradients ends, with its name
	// (unfused: "lagged", "forward", "loss", "backward"; fused: "lagged", "trunk", "blocks",
	// "backward"; "lagged" only with a lagged network), so that a benchmark can time the phases.
	Phase func(name string)
}

// ErrNonFinite marks a loss, gradient or parameter that became NaN or Inf.
var ErrNonFinite = errors.New("pcl: non-finite value")

// StepInfo reports one gradient step.
type StepInfo struct {
	Loss     float64 // (1/B) sum_rows C^2/2
	GradNorm float64 // global gradient norm before clipping
	Episodes int
	Steps    int
	// ClipScale is the factor the global-norm clip applied (1 when it did not bind).
	ClipScale float64
	// GradNormPolicy and GradNormValue are the norms of the policy's and the value network's
	// gradients before clipping (NaN for a network without separate value parameters).
	GradNormPolicy, GradNormValue float64
}

// NewLearnerOf returns the learner of model with cfg's objective and optimiser (cfg must be valid
// and the one model was built with).
func NewLearnerOf[T any, N Network[T]](cfg config.Config, model N) (*Learner[T, N], error) {
	opt, err := newOptimizer(model.Params(), cfg.OptimConfig)
	if err != nil {
		return nil, fmt.Errorf("pcl: optimiser: %w", err)
	}
	if _, err := newTrust(cfg.TrustRegion, model.Layout()); err != nil {
		return nil, err
	}
	if cfg.TrustRegion > 0 && cfg.TargetLag == 0 {
		return nil, fmt.Errorf("pcl: a trust region needs a lagged policy (target lag > 0)")
	}
	l := &Learner[T, N]{Model: model, Opt: opt, cfg: cfg, obj: NewObjective(cfg.LearnerConfig, model.Layout()), Fused: cfg.FusedOutput}
	for _, s := range model.Layout().Sizes {
		l.dHeads = append(l.dHeads, tensor.New(0, s))
	}
	if cfg.TargetLag > 0 {
		l.target = newTarget(cfg.TargetLag, model.Params())
	}
	return l, nil
}

// newOptimizer is the optimiser o names over params, with o's learning rate and Adam settings
// (RMSProp takes the epsilon too, SGD the learning rate alone).
func newOptimizer(params []*nn.Param, o config.OptimConfig) (optim.Optimizer, error) {
	return optim.New(string(o.Optimizer), params, optim.AdamConfig{LearningRate: o.LearningRate, Beta1: o.AdamBeta1, Beta2: o.AdamBeta2, Epsilon: o.AdamEps})
}

// Config is the learner's config, with the current weight alpha.
func (l *Learner[T, N]) Config() config.Config {
	c := l.cfg
	c.Alpha = l.Alpha()
	return c
}

// SetAlpha changes the regularisation weight (alpha, or tau for soft PCL) of the live learner: in
// the per-step terms, in the unified form's Q/alpha, and in the "inverse-alpha" policy scale. It
// is what a weight schedule (the released code's tau_start/tau_decay) calls between steps. The
// weight is held once, in the heads (Heads.SetAlpha).
func (l *Learner[T, N]) SetAlpha(alpha float64) error { return l.Model.Layout().SetAlpha(alpha) }

// Alpha is the current regularisation weight.
func (l *Learner[T, N]) Alpha() float64 { return l.Model.Layout().Alpha }

// Params are the trainable parameters.
func (l *Learner[T, N]) Params() []*nn.Param { return l.Model.Params() }

// StateParams are what a checkpoint holds besides Params, in order: the optimiser's state, the
// network's (Network.StateParams), then the lagged network's parameters when there is one.
func (l *Learner[T, N]) StateParams() []*nn.Param {
	ps := append(l.Opt.StateParams(), l.Model.StateParams()...)
	if l.target != nil {
		ps = append(ps, l.target.params...)
	}
	return ps
}

// Objective is the learner's objective: V and the per-step terms of the last Loss are read from
// it, and tests switch it to the reference path.
func (l *Learner[T, N]) Objective() *Objective { return &l.obj }

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// growRoom is grow for a buffer whose size changes from call to call (with the supports of a
// learning policy): it reallocates with a quarter to spare, so that it settles.
func growRoom[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}

// Loss returns the path-consistency loss of batch; with grad it also leaves in the parameters'
// Grad the gradient of the training objective: the exact gradient of the loss, except that the
// part through the per-step terms is multiplied by the policy scale (1/alpha for "inverse-alpha")
// and the part through V by CriticWeight.
func (l *Learner[T, N]) Loss(batch []T, grad bool) (StepInfo, error) {
	if len(batch) == 0 {
		return StepInfo{}, fmt.Errorf("pcl: loss of an empty batch")
	}
	f, fused := l.fusedNetwork()
	fused = fused && grad
	var targets []float64
	if l.target != nil {
		var err error
		if fused {
			targets, err = l.fusedBootstrap(f, batch)
		} else {
			targets, err = l.bootstrapValues(batch)
		}
		if err != nil {
			return StepInfo{}, err
		}
		l.phase("lagged")
	}
	if fused {
		l.obj.Targets = targets
		info, err := l.fusedLoss(f, batch, targets)
		info.ClipScale, info.GradNormPolicy, info.GradNormValue = math.NaN(), math.NaN(), math.NaN()
		return info, err
	}
	heads, steps, err := l.Model.ForwardBatch(batch)
	if err != nil {
		return StepInfo{}, err
	}
	l.phase("forward")
	n := 0
	for _, L := range steps.Lengths {
		n += L
	}
	var dHeads []*tensor.Matrix
	if grad {
		dHeads = l.dHeads
	}
	l.obj.Targets = targets
	loss, err := l.obj.Evaluate(heads, steps, dHeads)
	info := StepInfo{Loss: loss, Episodes: len(batch), Steps: n, ClipScale: math.NaN(), GradNormPolicy: math.NaN(), GradNormValue: math.NaN()}
	if err != nil || !grad {
		return info, err
	}
	l.phase("loss")
	nn.ZeroGrads(l.Params())
	if err := l.Model.Backward(dHeads); err != nil {
		return info, fmt.Errorf("pcl: backward: %w", err)
	}
	l.phase("backward")
	return info, nil
}

// phase reports the end of a phase to l.Phase.
func (l *Learner[T, N]) phase(name string) {
	if l.Phase != nil {
		l.Phase(name)
	}
}

// TrainStep takes one clipped optimiser step on batch. A non-finite loss or gradient leaves the
// parameters untouched and returns an error wrapping ErrNonFinite. A step that makes a parameter
// non-finite (an absurd learning rate) is also reported with ErrNonFinite; the parameters are then
// unusable and the caller must not save them.
func (l *Learner[T, N]) TrainStep(batch []T) (StepInfo, error) {
	info, err := l.Loss(batch, true)
	if err != nil {
		if math.IsNaN(info.Loss) || math.IsInf(info.Loss, 0) {
			return info, fmt.Errorf("%w: path-consistency loss is %v", ErrNonFinite, info.Loss)
		}
		return info, err
	}
	if s, ok := any(l.Model).(splitNetwork); ok {
		info.GradNormPolicy = optim.GlobalNorm(s.PolicyParams())
		info.GradNormValue = optim.GlobalNorm(s.ValueParams())
	}
	clip := l.cfg.ClipNorm
	info.GradNorm = optim.ClipGlobalNorm(l.Params(), clip)
	info.ClipScale = 1
	if clip > 0 && info.GradNorm > clip {
		info.ClipScale = clip / info.GradNorm
	}
	if math.IsNaN(info.GradNorm) || math.IsInf(info.GradNorm, 0) {
		return info, fmt.Errorf("%w: gradient norm is %v (loss %v)", ErrNonFinite, info.GradNorm, info.Loss)
	}
	if err := l.Opt.Step(); err != nil {
		return info, fmt.Errorf("pcl: %w", err)
	}
	for _, p := range l.Params() {
		if i := p.Value.FirstNonFinite(); i >= 0 {
			return info, fmt.Errorf("%w: parameter %s[%d] is %v after the optimiser step (learning rate %v)",
				ErrNonFinite, p.Name, i, p.Value.Data[i], l.cfg.LearningRate)
		}
	}
	if l.target != nil {
		l.target.update(l.Params())
	}
	return info, nil
}
