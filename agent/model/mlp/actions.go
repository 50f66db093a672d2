package mlp

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/sparsepcl/sparsepcl/agent/collect"
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/wrappers"
)

// AdaptActions returns env with an action space the learner can use, a Discrete starting at 0:
// a Discrete is used as it is, a Tuple of Discretes or a MultiDiscrete is combined into one index
// (first component least significant), and a Box is
// discretised into a grid of grid points per dimension. A grid on a non-Box action, a Box without a
// grid, an unbounded Box, and any other space are errors that name the space; the two about the
// grid are *config.FieldError of the field "grid".
func AdaptActions(env envs.VecEnv, grid int) (envs.VecEnv, error) {
	s := env.ActionSpace()
	if _, isBox := s.(envs.Box); grid > 0 && !isBox {
		return nil, &config.FieldError{Field: "grid", Value: grid, Reason: "needs a Box action space, the env's is " + verbatim(s)}
	}
	switch s := s.(type) {
	case envs.Discrete:
		if s.Start != 0 {
			return nil, fmt.Errorf("mlp: action space %v starts at %d: only Discrete(n) starting at 0 is supported", s, s.Start)
		}
		return env, nil
	case envs.Tuple, envs.MultiDiscrete:
		c, err := wrappers.CombineVecActions(env)
		if err != nil {
			return nil, fmt.Errorf("mlp: action space %v: %w", s, err)
		}
		return c, nil
	case envs.Box:
		if grid == 0 {
			return nil, &config.FieldError{Field: "grid", Value: grid,
				Reason: "the action space " + verbatim(s) + " is continuous: discretise it with a grid of k >= 2 points per dimension (the paper uses 3 and 5)"}
		}
		for i := range s.Low {
			if math.IsInf(s.Low[i], 0) || math.IsInf(s.High[i], 0) {
				return nil, fmt.Errorf("mlp: action space %v is unbounded in dimension %d: an action grid needs finite bounds", s, i)
			}
		}
		g, err := wrappers.DiscretizeVecActions(env, grid)
		if err != nil {
			return nil, fmt.Errorf("mlp: action grid over %v: %w", s, err)
		}
		return g, nil
	default:
		return nil, fmt.Errorf("mlp: action space %v is not supported: use a Discrete, a Tuple of Discretes, a MultiDiscrete, or a Box with an action grid", s)
	}
}

// verbatim is v's text as a format that prints it unchanged (a FieldError's Reason is a format).
func verbatim(v any) string { return strings.ReplaceAll(fmt.Sprint(v), "%", "%%") }

// EnvAction is the action that the env under AdaptActions' wrapper receives for index: the grid
// point of a discretised Box, the component values of a combined Tuple or MultiDiscrete, or the
// index itself.
func EnvAction(adapted envs.VecEnv, index int64) (any, error) {
	switch e := adapted.(type) {
	case *wrappers.DiscretizedVecEnv:
		p := make([]float64, e.Grid.Dims())
		if err := e.Grid.Point(index, p); err != nil {
			return nil, err
		}
		return p, nil
	case *wrappers.CombinedVecEnv:
		d := make([]int64, len(e.Combiner.ActionComponents()))
		if err := e.Combiner.SplitInto(index, d); err != nil {
			return nil, err
		}
		return d, nil
	default:
		return index, nil
	}
}

// Recording is one greedy episode as the env saw it.
type Recording struct {
	Seed    int64
	Actions []any // the env's actions (see EnvAction)
	Return  float64
}

// Record plays one greedy episode on the first copy of env (an AdaptActions result, autoreset
// disabled) from seed, for at most maxSteps steps, and returns the env's actions and the return.
func Record(ctx context.Context, env envs.VecEnv, enc Encoder, actor collect.Actor[float32], seed int64, maxSteps int) (Recording, error) {
	c, err := collect.New(env, enc, actor, collect.Options{MaxSteps: maxSteps})
	if err != nil {
		return Recording{}, fmt.Errorf("mlp: record: %w", err)
	}
	b, err := c.Episodes(ctx, nil, collect.Greedy, 0, seed)
	if err != nil {
		return Recording{}, fmt.Errorf("mlp: record: %w", err)
	}
	first := b.Trajectories[0]
	ep := Recording{Seed: seed, Return: b.Returns[0]}
	for _, a := range first.Actions {
		act, err := EnvAction(env, int64(a))
		if err != nil {
			return ep, err
		}
		ep.Actions = append(ep.Actions, act)
	}
	return ep, nil
}
