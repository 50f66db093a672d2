package mlp

import (
	"github.com/sparsepcl/sparsepcl/agent/collect"
	"github.com/sparsepcl/sparsepcl/agent/internal/noiseenv"
	"github.com/sparsepcl/sparsepcl/envs"
)

// newNoiseCollector is a collector of n copies of noiseenv.Env for l's model (k actions).
func newNoiseCollector(l *Learner, k, n int, seed uint64) (*collect.Collector[float32], envs.VecEnv, error) {
	copies := uint64(0) // each copy draws its own observations
	env, err := envs.SyncVec(func() (envs.Env, error) { copies++; return noiseenv.New(k, l.Model.Dim, seed+copies), nil }, n, envs.AutoresetDisabled)
	if err != nil {
		return nil, nil, err
	}
	enc, err := NewEncoder(env.ObservationSpace())
	if err != nil {
		return nil, nil, err
	}
	c, err := collect.New(env, enc, l.Model, collect.Options{Seed: int64(seed)})
	return c, env, err
}
