package control

import (
	"fmt"
	"math"

	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/wrappers"
)

// AdaptActions returns env with an action space the learner can use, a Discrete starting at 0:
// a Discrete is used as it is, a Tuple of Discretes or a MultiDiscrete is combined into one index
// (first component least significant), and a Box is
// discretised into a grid of grid points per dimension. A grid on a non-Box action, a Box without a
// grid, an unbounded Box, and any other space are errors that name the space.
func AdaptActions(env envs.VecEnv, grid int) (envs.VecEnv, error) {
	s := env.ActionSpace()
	if _, isBox := s.(envs.Box); grid > 0 && !isBox {
		return nil, fmt.Errorf("control: --grid %d needs a Box action space, the env's is %v", grid, s)
	}
	switch s := s.(type) {
	case envs.Discrete:
		if s.Start != 0 {
			return nil, fmt.Errorf("control: action space %v starts at %d: only Discrete(n) starting at 0 is supported", s, s.Start)
		}
		return env, nil
	case envs.Tuple, envs.MultiDiscrete:
		c, err := wrappers.CombineVecActions(env)
		if err != nil {
			return nil, fmt.Errorf("control: action space %v: %w", s, err)
		}
		return c, nil
	case envs.Box:
		if grid == 0 {
			return nil, fmt.Errorf("control: action space %v is continuous: discretise it with --grid k (k points per dimension; the paper uses 3 and 5)", s)
		}
		for i := range s.Low {
			if math.IsInf(s.Low[i], 0) || math.IsInf(s.High[i], 0) {
				return nil, fmt.Errorf("control: action space %v is unbounded in dimension %d: an action grid needs finite bounds", s, i)
			}
		}
		g, err := wrappers.DiscretizeVecActions(env, grid)
		if err != nil {
			return nil, fmt.Errorf("control: action grid over %v: %w", s, err)
		}
		return g, nil
	default:
		return nil, fmt.Errorf("control: action space %v is not supported: use a Discrete, a Tuple of Discretes, a MultiDiscrete, or a Box with --grid", s)
	}
}
