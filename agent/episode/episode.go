// Package episode defines Trajectory, the one stored unit of experience: what a sampler produces,
// a replay keeps and the learner trains on, for both model families.
//
// A trajectory is a sub-episode: L consecutive steps of one environment copy within one episode,
// with the L+1 observations around them. An episode is the trajectory that starts at a reset and
// ends where the episode ends, at a termination or a truncation. The algorithmic tasks' sampler
// plays whole episodes of token observations (Episode); the continuous-control sampler cuts
// long episodes of observation vectors into sub-episodes at the end of each iteration (the
// control package's Segment).
package episode

import "fmt"

// Observation is the element type of a trajectory's observations: a token id of a Discrete
// observation space (int32, one per state) or a component of an observation vector (float32, dim
// per state).
type Observation interface{ int32 | float32 }

// Trajectory is a sub-episode: L steps of one copy within one episode. Only a terminated
// trajectory does not bootstrap from V at its last state.
//
// The JSON names are those of the earlier Episode struct; the control replay's gob encoding goes
// by the Go field names, which are those of the earlier Segment struct.
type Trajectory[O Observation] struct {
	// Obs holds the L+1 observations s_0..s_L, dim values each (Validate). s_L is the final
	// observation, kept so that a trajectory that was not terminated can bootstrap from V(s_L).
	Obs []O `json:"obs"`
	// Actions holds the L actions a_0..a_{L-1} (combined Discrete indices).
	Actions []int32 `json:"actions"`
	// Rewards holds the L rewards.
	Rewards []float64 `json:"rewards"`
	// Terminated is true when the task ended at s_L.
	Terminated bool `json:"terminated"`
	// Truncated marks a trajectory that ends its episode without termination (a time limit). One
	// that is neither was cut short and its episode goes on in the next trajectory.
	Truncated bool `json:"truncated,omitempty"`
	// Iteration is the training iteration that collected it (the recency priority).
	Iteration int `json:"iteration"`
	// ReturnToGo[t] is the discounted return from state t to the end of the trajectory's episode,
	// filled in when the episode ends (nil before, and for an episode a resume cut short). It is
	// a diagnostic only: the critic's target scale.
	ReturnToGo []float64 `json:"return_to_go,omitempty"`
}

// Episode is a trajectory of token observations, as the algorithmic tasks' sampler plays them:
// each a whole episode.
type Episode = Trajectory[int32]

// TokenDim is the number of observation values per state of an Episode (Validate's dim).
const TokenDim = 1

// Len is the number of steps L.
func (e *Trajectory[O]) Len() int { return len(e.Actions) }

// TotalReward is the undiscounted return of the trajectory's steps.
func (e *Trajectory[O]) TotalReward() float64 {
	s := 0.0
	for _, r := range e.Rewards {
		s += r
	}
	return s
}

// Validate checks the shape invariants for observations of dim values per state (1 for token
// ids).
func (e *Trajectory[O]) Validate(dim int) error {
	L := len(e.Actions)
	if L < 1 {
		return fmt.Errorf("episode: trajectory has no steps")
	}
	if len(e.Obs) != (L+1)*dim || len(e.Rewards) != L {
		return fmt.Errorf("episode: trajectory of %d steps needs %d observation values and %d rewards, has %d and %d", L, (L+1)*dim, L, len(e.Obs), len(e.Rewards))
	}
	if e.ReturnToGo != nil && len(e.ReturnToGo) != L {
		return fmt.Errorf("episode: trajectory of %d steps has %d returns to go", L, len(e.ReturnToGo))
	}
	if e.Terminated && e.Truncated {
		return fmt.Errorf("episode: trajectory is both terminated and truncated")
	}
	return nil
}
