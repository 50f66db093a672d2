// Package registry builds the registry of every Go-native environment id. It holds no global
// state: Default returns a fresh envs.Registry on every call, and Make/MakeVec are shorthands that
// build one and use it (the nearest clean equivalent of `envs.Make("Copy-v0", options)`, which cannot
// live in package envs because the environments import envs).
package registry

import (
	"fmt"

	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
	"github.com/sparsepcl/sparsepcl/envs/classic"
)

// Default returns a new registry holding every Go-native id: the algorithmic tasks (Copy-v0,
// DuplicatedInput-v0, RepeatCopy-v0, Reverse-v0, ReversedAddition-v0, ReversedAddition3-v0) and
// Gymnasium's classic control (CartPole-v1, Acrobot-v1, MountainCar-v0, MountainCarContinuous-v0,
// Pendulum-v1).
func Default() *envs.Registry {
	r := envs.NewRegistry()
	for _, register := range []func(*envs.Registry) error{algorithmic.Register, classic.Register} {
		if err := register(r); err != nil {
			// The ids are fixed and distinct: failing here is a programming error.
			panic(fmt.Sprintf("registry: %v", err))
		}
	}
	return r
}

// Make builds one copy of a Go-native id, e.g. Make("Copy-v0", map[string]any{"base": 10}).
func Make(id string, options map[string]any) (envs.Env, error) { return Default().Make(id, options) }

// MakeVec builds n copies of a Go-native id as one VecEnv.
func MakeVec(id string, n int, options map[string]any) (envs.VecEnv, error) {
	return Default().MakeVec(id, n, options)
}
