package train

import (
	"context"
	"fmt"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
)

// EnvMaker makes the VecEnvs a run trains and evaluates on: n copies of cfg.Env with autoreset
// disabled, their seeds given at reset. The trainer never knows whether they are Go-native or
// remote.
type EnvMaker interface {
	MakeVec(ctx context.Context, cfg config.Config, n int) (envs.VecEnv, error)
}

// RegistryEnvs makes Go-native envs from a registry. The algorithmic tasks get the config's base
// and curriculum mode; other ids get no options but the autoreset mode.
type RegistryEnvs struct{ Registry *envs.Registry }

// MakeVec implements EnvMaker.
func (r RegistryEnvs) MakeVec(_ context.Context, cfg config.Config, n int) (envs.VecEnv, error) {
	if r.Registry == nil {
		return nil, fmt.Errorf("no environment registry")
	}
	if _, err := algorithmic.TaskByID(cfg.Env); err == nil {
		return MakeEnv(r.Registry, cfg, n)
	}
	return r.Registry.MakeVec(cfg.Env, n, map[string]any{"autoreset": "disabled"})
}

// ResolveNet returns cfg with Net "auto" replaced by the family the env's observation space calls
// for: the LSTM for a Discrete observation of a Go-native algorithmic task, the feed-forward
// networks otherwise.
func ResolveNet(cfg config.Config) config.Config {
	if cfg.Net != config.NetAuto {
		return cfg
	}
	if _, err := algorithmic.TaskByID(cfg.Env); err == nil {
		cfg.Net = config.NetLSTM
	} else {
		cfg.Net = config.NetMLP
	}
	return cfg
}
