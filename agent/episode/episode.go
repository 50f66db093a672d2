// Package episode defines the stored trajectory of one episode of a discrete-action task, the unit
// that the sampler produces, the replay buffer keeps and the learner trains on.
package episode

import "fmt"

// Episode is one complete (terminated) or cut-off (truncated) episode.
type Episode struct {
	// Obs holds the L+1 observations s_0..s_L (token ids of a Discrete observation space). s_L is the
	// final observation, kept so that a truncated episode can bootstrap from V(s_L).
	Obs []int32 `json:"obs"`
	// Actions holds the L actions a_0..a_{L-1} (combined Discrete indices).
	Actions []int32 `json:"actions"`
	// Rewards holds the L rewards.
	Rewards []float64 `json:"rewards"`
	// Terminated is true when the task ended; false means the episode was truncated.
	Terminated bool `json:"terminated"`
	// Iteration is the training iteration that collected it (the recency priority).
	Iteration int `json:"iteration"`
}

// Len is the number of steps L.
func (e *Episode) Len() int { return len(e.Actions) }

// TotalReward is the undiscounted return.
func (e *Episode) TotalReward() float64 {
	s := 0.0
	for _, r := range e.Rewards {
		s += r
	}
	return s
}

// Validate checks the shape invariants.
func (e *Episode) Validate() error {
	L := len(e.Actions)
	if L < 1 {
		return fmt.Errorf("episode: has no steps")
	}
	if len(e.Obs) != L+1 || len(e.Rewards) != L {
		return fmt.Errorf("episode: %d actions need %d observations and %d rewards, have %d and %d", L, L+1, L, len(e.Obs), len(e.Rewards))
	}
	return nil
}
