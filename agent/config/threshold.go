package config

import "math"

// Threshold is the greedy reward that counts as solved, or NaN when the run has none
// (NoThreshold: its env registers none and none was given).
func (c Config) Threshold() float64 {
	if c.NoThreshold {
		return math.NaN()
	}
	return c.RewardThreshold
}
