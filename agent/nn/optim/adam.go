// Package optim holds the learners' optimisers (Adam with TF's update rule, plain gradient
// descent, RMSProp) behind one small interface, global-norm gradient clipping, and NaN/Inf
// refusal.
package optim

import (
	"fmt"
	"math"

	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// AdamConfig holds Adam's hyperparameters.
type AdamConfig struct {
	LearningRate float64 // > 0
	Beta1        float64 // default 0.9
	Beta2        float64 // default 0.999
	Epsilon      float64 // default 2e-4, the reference PCL code's value
}

// DefaultAdamConfig returns the reference settings with learning rate lr.
func DefaultAdamConfig(lr float64) AdamConfig {
	return AdamConfig{LearningRate: lr, Beta1: 0.9, Beta2: 0.999, Epsilon: 2e-4}
}

// Adam is tf.train.AdamOptimizer: with beta powers p1 = β1^t, p2 = β2^t,
//
//	m ← β1·m + (1-β1)·g,  v ← β2·v + (1-β2)·g²
//	θ ← θ - lr·sqrt(1-p2)/(1-p1) · m / (sqrt(v) + ε)
//
// (ε is added to sqrt(v) unscaled, TF's "epsilon hat"). Its whole state is
// exposed as named matrices (StateParams) so a checkpoint resumes exactly.
type Adam struct {
	cfg    AdamConfig
	params []*nn.Param
	m, v   []*tensor.Matrix
	// powers holds [β1^t, β2^t] for the next step, as TF's beta1_power and
	// beta2_power variables (float32, so a restored run matches bit for bit).
	powers *tensor.Matrix
}

// NewAdam returns an optimiser over params; zero Beta1/Beta2/Epsilon take the defaults.
func NewAdam(params []*nn.Param, cfg AdamConfig) (*Adam, error) {
	d := DefaultAdamConfig(cfg.LearningRate)
	if cfg.Beta1 == 0 {
		cfg.Beta1 = d.Beta1
	}
	if cfg.Beta2 == 0 {
		cfg.Beta2 = d.Beta2
	}
	if cfg.Epsilon == 0 {
		cfg.Epsilon = d.Epsilon
	}
	if !(cfg.LearningRate > 0) || !(cfg.Beta1 > 0 && cfg.Beta1 < 1) || !(cfg.Beta2 > 0 && cfg.Beta2 < 1) || !(cfg.Epsilon > 0) {
		return nil, fmt.Errorf("optim: invalid Adam config %+v (want lr > 0, 0 < betas < 1, epsilon > 0)", cfg)
	}
	if err := checkParams(params); err != nil {
		return nil, err
	}
	a := &Adam{cfg: cfg, params: params, powers: tensor.New(1, 2)}
	for _, p := range params {
		a.m = append(a.m, tensor.New(p.Value.Rows, p.Value.Cols))
		a.v = append(a.v, tensor.New(p.Value.Rows, p.Value.Cols))
	}
	a.powers.Data[0], a.powers.Data[1] = float32(cfg.Beta1), float32(cfg.Beta2)
	return a, nil
}

// Config returns the hyperparameters in use.
func (a *Adam) Config() AdamConfig { return a.cfg }

// CheckFinite returns an error naming the first parameter whose gradient
// holds a NaN or Inf, and where.
func CheckFinite(params []*nn.Param) error {
	for _, p := range params {
		if i := p.Grad.FirstNonFinite(); i >= 0 {
			return fmt.Errorf("optim: gradient of %s (%s) has %v at row %d col %d",
				p.Name, p.Grad.Shape(), p.Grad.Data[i], i/p.Grad.Cols, i%p.Grad.Cols)
		}
	}
	return nil
}

// Step applies one update from the current gradients. If any gradient is
// NaN or Inf nothing is changed and the error names the parameter.
func (a *Adam) Step() error {
	if err := CheckFinite(a.params); err != nil {
		return fmt.Errorf("optim: adam step refused: %w", err)
	}
	b1, b2 := float32(a.cfg.Beta1), float32(a.cfg.Beta2)
	p1, p2 := float64(a.powers.Data[0]), float64(a.powers.Data[1])
	lrT := float32(a.cfg.LearningRate * math.Sqrt(1-p2) / (1 - p1))
	eps := float32(a.cfg.Epsilon)
	for i, p := range a.params {
		adamUpdate(p.Value.Data, a.m[i].Data, a.v[i].Data, p.Grad.Data, b1, b2, 1-b1, 1-b2, lrT, eps)
	}
	a.powers.Data[0] *= b1
	a.powers.Data[1] *= b2
	return nil
}

// StateParams returns Adam's state as named matrices (Grad is nil):
// "adam.powers" (1x2) and "adam.m/<param>", "adam.v/<param>" for each
// parameter. Restoring values into them (e.g. with checkpoint.Restore)
// resumes the optimiser exactly.
func (a *Adam) StateParams() []*nn.Param {
	ps := []*nn.Param{{Name: "adam.powers", Value: a.powers}}
	for i, p := range a.params {
		ps = append(ps, &nn.Param{Name: "adam.m/" + p.Name, Value: a.m[i]}, &nn.Param{Name: "adam.v/" + p.Name, Value: a.v[i]})
	}
	return ps
}

// GlobalNorm returns sqrt(Σ g²) over all gradients, in float64.
func GlobalNorm(params []*nn.Param) float64 {
	var s float64
	for _, p := range params {
		s += p.Grad.SumSquares()
	}
	return math.Sqrt(s)
}

// ClipGlobalNorm scales all gradients by maxNorm/norm when their global
// norm exceeds maxNorm (tf.clip_by_global_norm) and returns the norm before
// clipping. maxNorm <= 0 disables clipping. A non-finite norm is returned
// as is and nothing is scaled (Adam.Step will then refuse the gradients).
func ClipGlobalNorm(params []*nn.Param, maxNorm float64) float64 {
	norm := GlobalNorm(params)
	if maxNorm <= 0 || norm <= maxNorm || math.IsNaN(norm) || math.IsInf(norm, 0) {
		return norm
	}
	scale := float32(maxNorm / norm)
	for _, p := range params {
		for k := range p.Grad.Data {
			p.Grad.Data[k] *= scale
		}
	}
	return norm
}
