package algorithmic

import (
	"fmt"

	"github.com/sparsepcl/sparsepcl/envs"
)

// Config configures a task. The zero values of the flags are the paper's setup.
type Config struct {
	Task Task
	// Base is the vocabulary size; 0 means the task's default.
	Base int
	// FactoredActions gives the Tuple(Discrete(M), Discrete(2), Discrete(base)) action space instead
	// of the combined Discrete(M*2*base).
	FactoredActions bool
	// PerCopyCurriculum gives every copy of a VecEnv its own curriculum instead of one shared one.
	PerCopyCurriculum bool
	// Autoreset is the VecEnv's autoreset mode.
	Autoreset envs.AutoresetMode
}

// Option keys understood by ParseConfig.
const (
	OptBase              = "base"
	OptFactoredActions   = "factored_actions"
	OptPerCopyCurriculum = "per_copy_curriculum"
	OptAutoreset         = "autoreset"
	// OptInput is the reset option holding an explicit input.
	OptInput = "input"
)

// ParseConfig reads make options for task t; unknown keys are an error.
func ParseConfig(t Task, options map[string]any) (Config, error) {
	if err := envs.CheckOptionKeys(options, OptBase, OptFactoredActions, OptPerCopyCurriculum, OptAutoreset); err != nil {
		return Config{}, err
	}
	cfg := Config{Task: t}
	var err error
	if cfg.Base, err = envs.OptionInt(options, OptBase, t.DefaultBase()); err != nil {
		return Config{}, err
	}
	if cfg.FactoredActions, err = envs.OptionBool(options, OptFactoredActions, false); err != nil {
		return Config{}, err
	}
	if cfg.PerCopyCurriculum, err = envs.OptionBool(options, OptPerCopyCurriculum, false); err != nil {
		return Config{}, err
	}
	if cfg.Autoreset, err = envs.OptionAutoreset(options, OptAutoreset, envs.AutoresetNextStep); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

func (cfg Config) core() (*core, error) {
	if !cfg.Task.valid() {
		return nil, fmt.Errorf("algorithmic: invalid task %d", int(cfg.Task))
	}
	base := cfg.Base
	if base == 0 {
		base = cfg.Task.DefaultBase()
	}
	if cfg.Autoreset != envs.AutoresetNextStep && cfg.Autoreset != envs.AutoresetDisabled {
		return nil, fmt.Errorf("algorithmic: invalid autoreset mode %d", int(cfg.Autoreset))
	}
	return newCore(cfg.Task, base, cfg.FactoredActions)
}

func (c *core) actionSpace() envs.Space {
	if c.factored {
		return envs.Tuple{Spaces: []envs.Space{envs.Discrete{N: c.moves}, envs.Discrete{N: 2}, envs.Discrete{N: c.base}}}
	}
	return envs.Discrete{N: c.nActions}
}

func (c *core) observationSpace() envs.Space { return envs.Discrete{N: c.base + 1} }

// Register adds every task to r under its id, with Make and MakeVec reading the make options.
func Register(r *envs.Registry) error {
	for _, t := range Tasks() {
		err := r.Register(t.ID(), envs.Factory{
			Make: func(options map[string]any) (envs.Env, error) {
				cfg, err := ParseConfig(t, options)
				if err != nil {
					return nil, err
				}
				return NewEnv(cfg)
			},
			MakeVec: func(n int, options map[string]any) (envs.VecEnv, error) {
				cfg, err := ParseConfig(t, options)
				if err != nil {
					return nil, err
				}
				return NewVecEnv(cfg, n)
			},
			Summary: t.Summary(),
		})
		if err != nil {
			return err
		}
	}
	return nil
}
