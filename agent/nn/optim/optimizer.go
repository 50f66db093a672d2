package optim

import (
	"fmt"
	"math"

	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Optimizer is what a learner steps: one update of its parameters from their gradients, and the
// state a checkpoint must hold to resume it exactly.
type Optimizer interface {
	Step() error
	StateParams() []*nn.Param
}

// Names of the optimisers New makes.
const (
	NameAdam    = "adam"
	NameSGD     = "sgd"
	NameRMSProp = "rmsprop"
)

// New returns the optimiser called name over params: Adam with cfg, plain gradient descent at
// cfg.LearningRate, or RMSProp at cfg.LearningRate with decay RMSPropDecay and epsilon cfg.Epsilon.
func New(name string, params []*nn.Param, cfg AdamConfig) (Optimizer, error) {
	switch name {
	case NameAdam:
		return NewAdam(params, cfg)
	case NameSGD:
		return NewSGD(params, cfg.LearningRate)
	case NameRMSProp:
		return NewRMSProp(params, cfg.LearningRate, cfg.Epsilon)
	}
	return nil, fmt.Errorf("optim: unknown optimiser %q (want %q, %q or %q)", name, NameAdam, NameSGD, NameRMSProp)
}

// checkParams verifies that params are usable by an optimiser: no nil parts, unique names, and
// gradients shaped like their values.
func checkParams(params []*nn.Param) error {
	seen := map[string]bool{}
	for _, p := range params {
		if p == nil || p.Value == nil || p.Grad == nil {
			return fmt.Errorf("optim: nil parameter, value or gradient")
		}
		if seen[p.Name] {
			return fmt.Errorf("optim: duplicate parameter name %q", p.Name)
		}
		seen[p.Name] = true
		if err := tensor.SameShape("optim: gradient of "+p.Name, p.Value, p.Grad); err != nil {
			return err
		}
	}
	return nil
}

// SGD is plain gradient descent, the update of the paper's Algorithm 1: θ ← θ - lr·g. It has no
// state.
type SGD struct {
	lr     float32
	params []*nn.Param
}

// NewSGD returns gradient descent over params at learning rate lr.
func NewSGD(params []*nn.Param, lr float64) (*SGD, error) {
	if !(lr > 0) {
		return nil, fmt.Errorf("optim: sgd learning rate %v, want > 0", lr)
	}
	if err := checkParams(params); err != nil {
		return nil, err
	}
	return &SGD{lr: float32(lr), params: params}, nil
}

// Step applies one update; with a NaN or Inf gradient nothing changes and the error names it.
func (s *SGD) Step() error {
	if err := CheckFinite(s.params); err != nil {
		return fmt.Errorf("optim: sgd step refused: %w", err)
	}
	for _, p := range s.params {
		w, g := p.Value.Data, p.Grad.Data
		for k := range w {
			w[k] -= s.lr * g[k]
		}
	}
	return nil
}

// StateParams is empty: gradient descent keeps no state.
func (s *SGD) StateParams() []*nn.Param { return nil }

// RMSPropDecay is RMSProp's decay of the mean square, TensorFlow's default.
const RMSPropDecay = 0.9

// RMSProp scales each step by a running root mean square of the gradient (no momentum):
//
//	s ← ρ·s + (1-ρ)·g²,  θ ← θ - lr·g / (sqrt(s) + ε)
//
// with ρ = RMSPropDecay. Unlike Adam it has no first moment and no bias correction, so its first
// steps are larger than lr (by 1/sqrt(1-ρ) ≈ 3.2 at the first).
type RMSProp struct {
	lr, eps float32
	params  []*nn.Param
	ms      []*tensor.Matrix
}

// NewRMSProp returns RMSProp over params at learning rate lr with epsilon eps.
func NewRMSProp(params []*nn.Param, lr, eps float64) (*RMSProp, error) {
	if !(lr > 0) || !(eps > 0) {
		return nil, fmt.Errorf("optim: rmsprop learning rate %v and epsilon %v, want both > 0", lr, eps)
	}
	if err := checkParams(params); err != nil {
		return nil, err
	}
	r := &RMSProp{lr: float32(lr), eps: float32(eps), params: params}
	for _, p := range params {
		r.ms = append(r.ms, tensor.New(p.Value.Rows, p.Value.Cols))
	}
	return r, nil
}

// Step applies one update; with a NaN or Inf gradient nothing changes and the error names it.
func (r *RMSProp) Step() error {
	if err := CheckFinite(r.params); err != nil {
		return fmt.Errorf("optim: rmsprop step refused: %w", err)
	}
	const rho = float32(RMSPropDecay)
	for i, p := range r.params {
		w, g, s := p.Value.Data, p.Grad.Data, r.ms[i].Data
		for k := range w {
			s[k] = rho*s[k] + (1-rho)*g[k]*g[k]
			w[k] -= r.lr * g[k] / (float32(math.Sqrt(float64(s[k]))) + r.eps)
		}
	}
	return nil
}

// StateParams returns the mean squares as "rmsprop.ms/<param>" (Grad nil).
func (r *RMSProp) StateParams() []*nn.Param {
	ps := make([]*nn.Param, len(r.params))
	for i, p := range r.params {
		ps[i] = &nn.Param{Name: "rmsprop.ms/" + p.Name, Value: r.ms[i]}
	}
	return ps
}
