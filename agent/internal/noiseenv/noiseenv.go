// Package noiseenv is the tests' and benchmarks' cheapest long-episode env: observations of
// uniform noise and any number of discrete actions, so that a collector's or a learner's step on
// it costs the policy alone.
package noiseenv

import (
	"math/rand/v2"

	"github.com/sparsepcl/sparsepcl/envs"
)

// Env has New's dim observation values, uniform in [-1, 1] (17 is HalfCheetah's), any of K
// actions, reward 0, and an episode that never ends, or with Limit > 0 is truncated after Limit
// steps, as HalfCheetah's are after 1,000.
type Env struct {
	K, Limit int
	t        int
	rng      *rand.Rand
	obs      []float64
}

// New is an Env of k actions and dim observation values whose noise is drawn from seed.
func New(k, dim int, seed uint64) *Env {
	return &Env{K: k, rng: rand.New(rand.NewPCG(seed, 3)), obs: make([]float64, dim)}
}

func (e *Env) draw() any {
	for i := range e.obs {
		e.obs[i] = 2*e.rng.Float64() - 1
	}
	return e.obs
}

// Reset starts an episode.
func (e *Env) Reset(*int64, map[string]any) (any, envs.Info, error) {
	e.t = 0
	return e.draw(), nil, nil
}

// Step checks the action and draws the next observation.
func (e *Env) Step(action any) (any, float64, bool, bool, envs.Info, error) {
	if err := e.ActionSpace().Check(action); err != nil {
		return nil, 0, false, false, nil, err
	}
	e.t++
	return e.draw(), 0, false, e.Limit > 0 && e.t >= e.Limit, nil, nil
}

// ActionSpace is Discrete(K).
func (e *Env) ActionSpace() envs.Space { return envs.Discrete{N: int64(e.K)} }

// ObservationSpace is a Box of dim values in [-1, 1].
func (e *Env) ObservationSpace() envs.Space { return envs.NewBox(-1, 1, envs.Float64, len(e.obs)) }

// Close does nothing.
func (e *Env) Close() error { return nil }
