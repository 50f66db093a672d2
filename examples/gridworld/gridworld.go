package main

import (
	"fmt"

	"github.com/sparsepcl/sparsepcl/envs"
)

// GridWorld is a user's env: a 4 × 4 grid walked from the top-left cell to the bottom-right one,
// reward 1 on arrival (terminated), cut off after 12 steps (truncated). Observations are the cell
// (Discrete(16)), actions up, right, down, left (Discrete(4)); a move into a wall stays put.
type GridWorld struct {
	cell, steps int
	done        bool
}

const (
	side     = 4
	goal     = side*side - 1
	maxSteps = 12
)

var _ envs.Env = (*GridWorld)(nil)

func (g *GridWorld) ObservationSpace() envs.Space { return envs.Discrete{N: side * side} }
func (g *GridWorld) ActionSpace() envs.Space      { return envs.Discrete{N: 4} }
func (g *GridWorld) Close() error                 { return nil }

// Reset starts at the top-left cell; the grid has no randomness, so the seed changes nothing.
func (g *GridWorld) Reset(_ *int64, _ map[string]any) (any, envs.Info, error) {
	g.cell, g.steps, g.done = 0, 0, false
	return int64(g.cell), nil, nil
}

// Step moves one cell; an action outside Discrete(4), or a step after the end, is an error.
func (g *GridWorld) Step(action any) (any, float64, bool, bool, envs.Info, error) {
	if err := g.ActionSpace().Check(action); err != nil {
		return nil, 0, false, false, nil, fmt.Errorf("gridworld: %w", err)
	}
	if g.done {
		return nil, 0, false, false, nil, fmt.Errorf("gridworld: step after the episode ended: reset first")
	}
	r, c := g.cell/side, g.cell%side
	switch action.(int64) {
	case 0:
		r = max(r-1, 0)
	case 1:
		c = min(c+1, side-1)
	case 2:
		r = min(r+1, side-1)
	case 3:
		c = max(c-1, 0)
	}
	g.cell, g.steps = r*side+c, g.steps+1
	terminated := g.cell == goal
	truncated := !terminated && g.steps >= maxSteps
	g.done = terminated || truncated
	reward := 0.0
	if terminated {
		reward = 1
	}
	return int64(g.cell), reward, terminated, truncated, nil, nil
}

// Register adds GridWorld-v0 to reg, with its vectorised form (envs.SyncVec) in the autoreset
// mode the trainer asks for.
func Register(reg *envs.Registry) error {
	return reg.Register("GridWorld-v0", envs.Factory{
		Make: func(map[string]any) (envs.Env, error) { return &GridWorld{}, nil },
		MakeVec: func(n int, options map[string]any) (envs.VecEnv, error) {
			mode, _ := options["autoreset"].(envs.AutoresetMode)
			return envs.SyncVec(func() (envs.Env, error) { return &GridWorld{}, nil }, n, mode)
		},
		Summary: "a 4 x 4 grid walked to its far corner (examples/gridworld)",
	})
}
