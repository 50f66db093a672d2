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

// EnvFactory makes the VecEnv an env request names, Go-native or served by another process
// (internal/envmaker.Maker). It knows nothing of the config: FactoryEnvs asks it for EnvRequest.
type EnvFactory interface {
	MakeVec(ctx context.Context, req envs.VecRequest) (envs.VecEnv, error)
}

// FactoryEnvs is the EnvMaker that asks an EnvFactory for EnvRequest(cfg, n). It implements
// EnvServerInfo when the factory does.
type FactoryEnvs struct{ Factory EnvFactory }

// MakeVec implements EnvMaker.
func (f FactoryEnvs) MakeVec(ctx context.Context, cfg config.Config, n int) (envs.VecEnv, error) {
	return f.Factory.MakeVec(ctx, EnvRequest(cfg, n))
}

// EnvServerVersions implements EnvServerInfo: the factory's, or nil when it has none.
func (f FactoryEnvs) EnvServerVersions() map[string]string {
	if info, ok := f.Factory.(EnvServerInfo); ok {
		return info.EnvServerVersions()
	}
	return nil
}

// EnvRequest is the request for n copies of cfg.Env with autoreset disabled. The algorithmic tasks
// get the config's base and curriculum mode as options; other ids get none.
func EnvRequest(cfg config.Config, n int) envs.VecRequest {
	req := envs.VecRequest{ID: cfg.Env, Copies: n, Autoreset: envs.AutoresetDisabled}
	if _, err := algorithmic.TaskByID(cfg.Env); err == nil {
		req.Options = map[string]any{"base": cfg.Base, "per_copy_curriculum": cfg.Curriculum == config.CurriculumPerCopy}
	}
	return req
}

// RegistryEnvs makes Go-native envs from a registry, as EnvRequest says.
type RegistryEnvs struct{ Registry *envs.Registry }

// MakeVec implements EnvMaker.
func (r RegistryEnvs) MakeVec(_ context.Context, cfg config.Config, n int) (envs.VecEnv, error) {
	if r.Registry == nil {
		return nil, fmt.Errorf("no environment registry")
	}
	return r.Registry.MakeRequest(EnvRequest(cfg, n))
}
