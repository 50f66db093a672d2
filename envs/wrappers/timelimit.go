package wrappers

import (
	"fmt"

	"github.com/sparsepcl/sparsepcl/envs"
)

// TimeLimit truncates episodes after MaxSteps steps, as Gymnasium's TimeLimit: the step that reaches
// the limit returns truncated = true (terminated keeps whatever the env said, so both can be true).
// Truncation is not termination: a learner bootstraps from V at a truncated end.
type TimeLimit struct {
	envs.Env
	maxSteps int
	elapsed  int
	ended    bool
}

// NewTimeLimit wraps env; maxSteps must be >= 1.
func NewTimeLimit(env envs.Env, maxSteps int) (*TimeLimit, error) {
	if maxSteps < 1 {
		return nil, fmt.Errorf("time limit: %d steps, want >= 1", maxSteps)
	}
	return &TimeLimit{Env: env, maxSteps: maxSteps, ended: true}, nil
}

// Elapsed is the number of steps of the current episode.
func (e *TimeLimit) Elapsed() int { return e.elapsed }

func (e *TimeLimit) Reset(seed *int64, options map[string]any) (any, envs.Info, error) {
	obs, info, err := e.Env.Reset(seed, options)
	if err != nil {
		return nil, nil, err
	}
	e.elapsed, e.ended = 0, false
	return obs, info, nil
}

func (e *TimeLimit) Step(action any) (any, float64, bool, bool, envs.Info, error) {
	if e.ended {
		return nil, 0, false, false, nil, fmt.Errorf("time limit: step after the episode ended; call Reset")
	}
	obs, r, term, trunc, info, err := e.Env.Step(action)
	if err != nil {
		return nil, 0, false, false, nil, err
	}
	e.elapsed++
	if e.elapsed >= e.maxSteps {
		trunc = true
	}
	e.ended = term || trunc
	return obs, r, term, trunc, info, nil
}
