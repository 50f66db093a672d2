// Package success says when a run on an algorithmic task has solved it, and how close it is: the
// maximum reward at each curriculum level, the fraction of it that a mean reward reaches, and a
// solved threshold per task.
//
// The largest return of an episode is the length of its target (+1 per correct symbol), so it
// depends on the task and, through the input length min_length + {0, 1, 2}, on the curriculum
// level. A fixed reward threshold therefore means different things per task: gym's 25 cannot be
// reached on DuplicatedInput at all (its targets are half the input, at most 16 symbols). The
// thresholds here are gym's registered reward thresholds of each task, which are all reachable at
// the top of the curriculum; ThresholdFraction expresses each as a fraction of the maximum reward
// there, which carries the same bar to any curriculum level.
package success

import (
	"fmt"

	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
)

// thresholds are gym's registered reward_threshold values of the -v0 tasks.
var thresholds = map[algorithmic.Task]float64{
	algorithmic.Copy:              25,
	algorithmic.DuplicatedInput:   9,
	algorithmic.RepeatCopy:        75,
	algorithmic.Reverse:           25,
	algorithmic.ReversedAddition:  25,
	algorithmic.ReversedAddition3: 25,
}

// Task is an algorithmic task at one base.
type Task struct {
	Task algorithmic.Task
	Base int
}

// ForEnv resolves an env id and base; ok is false for an id that is not an algorithmic task.
func ForEnv(env string, base int) (Task, bool, error) {
	t, err := algorithmic.TaskByID(env)
	if err != nil {
		return Task{}, false, nil
	}
	if base < 2 {
		return Task{}, true, fmt.Errorf("success: %s base %d, want >= 2", env, base)
	}
	return Task{Task: t, Base: base}, true, nil
}

// Threshold is the task's solved threshold on the mean episode reward (gym's reward_threshold).
func (t Task) Threshold() float64 { return thresholds[t.Task] }

// TopLevel is the highest curriculum level (min_length).
func (t Task) TopLevel() int { return algorithmic.MaxMinLength }

// TargetLength is the expected target length (the maximum return) of an input of length n
// (columns, on the grid).
func (t Task) TargetLength(n int) float64 {
	switch t.Task {
	case algorithmic.DuplicatedInput:
		return float64(max(n, 2) / 2)
	case algorithmic.RepeatCopy:
		return float64(3 * n)
	case algorithmic.ReversedAddition, algorithmic.ReversedAddition3:
		return float64(n) + carryOut(t.Base, t.Task.Rows(), n)
	}
	return float64(n)
}

// MaxReward is the expected maximum return at curriculum level minLength: the mean target length
// over the three input lengths minLength, minLength+1, minLength+2 that a reset draws uniformly.
func (t Task) MaxReward(minLength int) float64 {
	s := 0.0
	for d := range 3 {
		s += t.TargetLength(minLength + d)
	}
	return s / 3
}

// ThresholdFraction is Threshold as a fraction of the maximum reward at the top level.
func (t Task) ThresholdFraction() float64 { return t.Threshold() / t.MaxReward(t.TopLevel()) }

// Fraction is reward as a fraction of the maximum at curriculum level minLength.
func (t Task) Fraction(reward float64, minLength int) float64 { return reward / t.MaxReward(minLength) }

// Solved reports whether a mean reward meets the task's threshold, which is reachable only near
// the top of the curriculum: a run that is perfect on short
// inputs has not solved the task.
func (t Task) Solved(reward float64) bool { return reward >= t.Threshold() }

// SolvedAtLevel reports whether reward reaches ThresholdFraction of the maximum at minLength: the
// same bar as Solved, carried to a lower curriculum level.
func (t Task) SolvedAtLevel(reward float64, minLength int) bool {
	return reward >= t.ThresholdFraction()*t.MaxReward(minLength)
}

// carryOut is the probability that adding rows uniform base-b numbers of n digits (least
// significant first, as ReversedAddition does) leaves a final carry > 0. The carry is a Markov
// chain over columns; its distribution is propagated exactly.
func carryOut(base, rows, n int) float64 {
	maxCarry := rows - 1 // rows*(base-1) + carry < rows*base, so the carry stays below rows
	dist := make([]float64, maxCarry+1)
	dist[0] = 1
	// sums[s] = number of ways rows digits sum to s.
	sums := []float64{1}
	for range rows {
		next := make([]float64, len(sums)+base-1)
		for s, w := range sums {
			for d := range base {
				next[s+d] += w
			}
		}
		sums = next
	}
	total := 0.0
	for _, w := range sums {
		total += w
	}
	for range n {
		next := make([]float64, maxCarry+1)
		for c, pc := range dist {
			if pc == 0 {
				continue
			}
			for s, w := range sums {
				next[(s+c)/base] += pc * w / total
			}
		}
		dist = next
	}
	return 1 - dist[0]
}

// DefaultThreshold is the solved threshold of env: the task's for an algorithmic task, fallback
// for any other env.
func DefaultThreshold(env string, fallback float64) float64 {
	if t, ok, _ := ForEnv(env, 2); ok {
		return t.Threshold()
	}
	return fallback
}

// portThresholds are Gymnasium's registered reward_threshold values of the Go ports of its classic
// control envs (Pendulum-v1 registers none).
var portThresholds = map[string]float64{
	"CartPole-v1":              475,
	"Acrobot-v1":               -100,
	"MountainCar-v0":           -110,
	"MountainCarContinuous-v0": 90,
}

// RegisteredThreshold is the reward_threshold that Gymnasium registers for a Go-native env id: an
// algorithmic task's or a classic control port's; ok is false for an id that registers none (and
// for ids that are not Go-native: ask the env server for those).
func RegisteredThreshold(env string) (threshold float64, ok bool) {
	if t, isTask, _ := ForEnv(env, 2); isTask {
		return t.Threshold(), true
	}
	threshold, ok = portThresholds[env]
	return threshold, ok
}
