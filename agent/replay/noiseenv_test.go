package replay_test

import (
	"math/rand/v2"

	"github.com/sparsepcl/sparsepcl/envs"
)

// noiseEnv is a test's and benchmark's env: dim observation values (uniform in [-1, 1]; 17 is
// HalfCheetah's), any of k actions, and an episode that never ends (or, with limit > 0, is
// truncated after limit steps, as HalfCheetah's are after 1,000). It costs next to nothing, so a collector's step on it
// is the policy's cost.
type noiseEnv struct {
	k, limit, t int
	rng         *rand.Rand
	obs         []float64
}

func newNoiseEnv(k, dim int, seed uint64) *noiseEnv {
	return &noiseEnv{k: k, rng: rand.New(rand.NewPCG(seed, 3)), obs: make([]float64, dim)}
}

func (e *noiseEnv) draw() any {
	for i := range e.obs {
		e.obs[i] = 2*e.rng.Float64() - 1
	}
	return e.obs
}

func (e *noiseEnv) Reset(*int64, map[string]any) (any, envs.Info, error) {
	e.t = 0
	return e.draw(), nil, nil
}

func (e *noiseEnv) Step(action any) (any, float64, bool, bool, envs.Info, error) {
	if err := e.ActionSpace().Check(action); err != nil {
		return nil, 0, false, false, nil, err
	}
	e.t++
	return e.draw(), 0, false, e.limit > 0 && e.t >= e.limit, nil, nil
}

func (e *noiseEnv) ActionSpace() envs.Space      { return envs.Discrete{N: int64(e.k)} }
func (e *noiseEnv) ObservationSpace() envs.Space { return envs.NewBox(-1, 1, envs.Float64, len(e.obs)) }
func (e *noiseEnv) Close() error                 { return nil }
