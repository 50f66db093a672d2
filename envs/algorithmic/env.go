package algorithmic

import (
	"fmt"

	"github.com/sparsepcl/sparsepcl/envs"
)

// Env is one copy of a task, with its own curriculum.
type Env struct {
	c       *core
	e       *episode
	scratch []int64
}

var (
	_ envs.Env           = (*Env)(nil)
	_ envs.ActionFactors = (*Env)(nil)
)

// NewEnv builds a single copy.
func NewEnv(cfg Config) (*Env, error) {
	c, err := cfg.core()
	if err != nil {
		return nil, err
	}
	return &Env{c: c, e: newEpisode(newCurriculum(cfg.Task))}, nil
}

// Reset starts an episode. Options: "input" (see the package doc). A nil seed keeps the stream.
func (v *Env) Reset(seed *int64, options map[string]any) (any, envs.Info, error) {
	if err := envs.CheckOptionKeys(options, OptInput); err != nil {
		return nil, nil, fmt.Errorf("%v: reset: %w", v.c.task, err)
	}
	var explicit []int64
	cols := 0
	if in, ok := options[OptInput]; ok {
		var err error
		v.scratch, cols, err = v.c.prepareInput(in, v.scratch)
		if err != nil {
			return nil, nil, fmt.Errorf("reset: %w", err)
		}
		explicit = v.scratch
	}
	return v.c.reset(v.e, seed, explicit, cols), nil, nil
}

// Step applies an action: an int64 combined index, or []any{move, write, char} of int64 when the
// actions are factored.
func (v *Env) Step(action any) (any, float64, bool, bool, envs.Info, error) {
	if !v.e.started {
		return nil, 0, false, false, nil, fmt.Errorf("%v: step before reset", v.c.task)
	}
	if v.e.ended {
		return nil, 0, false, false, nil, fmt.Errorf("%v: step after the episode ended; call Reset", v.c.task)
	}
	if err := v.c.actionSpace().Check(action); err != nil {
		return nil, 0, false, false, nil, fmt.Errorf("%v: step: %w", v.c.task, err)
	}
	a, ok := action.(int64)
	if !ok {
		t := action.([]any)
		a, _ = v.c.combine(t[0].(int64), t[1].(int64), t[2].(int64))
	}
	obs, r, done := v.c.step(v.e, a)
	return obs, r, done, false, nil, nil
}

func (v *Env) ActionSpace() envs.Space      { return v.c.actionSpace() }
func (v *Env) ObservationSpace() envs.Space { return v.c.observationSpace() }
func (v *Env) Close() error                 { return nil }

// ActionComponents returns (M, 2, base), the sizes of (move, write, char).
func (v *Env) ActionComponents() []int64 { return v.c.components() }

// Task is the task this env runs.
func (v *Env) Task() Task { return v.c.task }

// Base is the vocabulary size.
func (v *Env) Base() int { return int(v.c.base) }

// MinLength is the curriculum's current min_length.
func (v *Env) MinLength() int { return v.e.cur.MinLength() }

// Curriculum is the env's curriculum (read-only use).
func (v *Env) Curriculum() *Curriculum { return v.e.cur }

// TargetLength is len(target) of the current episode, the largest possible return.
func (v *Env) TargetLength() int { return len(v.e.target) }

// Target returns a copy of the current target.
func (v *Env) Target() []int64 { return append([]int64(nil), v.e.target...) }

// InputWidth is the number of symbols (tape) or columns (grid) of the current input.
func (v *Env) InputWidth() int { return v.e.cols }

// TimeLimit is the current episode's limit; it can last TimeLimit()+1 steps.
func (v *Env) TimeLimit() int { return v.e.timeLimit }

// Combine turns (move, write, char) into the combined action index.
func (v *Env) Combine(move, write, char int64) (int64, error) { return v.c.combine(move, write, char) }

// Render draws the current state as text.
func (v *Env) Render() string { return v.c.render(v.e, v.e.cur.MinLength()) }
