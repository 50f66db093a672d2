package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/sparsepcl/sparsepcl/envs"
)

// CEM is the cross-entropy method over linear policies a = clip(W·obs + b) of a Box action space:
// each iteration samples a population of parameter vectors from a diagonal Gaussian, plays one
// episode with each (one env copy per member, all stepped as one batch), and refits the Gaussian
// to the elite. It knows nothing of sparsepcl's learner: only envs.VecEnv.
type CEM struct {
	Elite    int     // members refitted to
	MinStd   float64 // floor of the sampling std, so the search never stops exploring
	MaxSteps int     // steps per episode at most

	mean, std []float64
	rng       *rand.Rand
}

// Iteration is what one CEM iteration saw.
type Iteration struct {
	Mean, Best float64 // the population's mean return and its best
}

// NewCEM starts the search at zero with std 1 for an env of obsDim observations and actDim actions.
func NewCEM(obsDim, actDim, elite int, seed uint64) *CEM {
	n := (obsDim + 1) * actDim
	c := &CEM{Elite: elite, MinStd: 0.05, MaxSteps: 1000, mean: make([]float64, n), std: make([]float64, n), rng: rand.New(rand.NewPCG(seed, 1))}
	for i := range c.std {
		c.std[i] = 1
	}
	return c
}

// Step runs one iteration on env, whose copies are the population.
func (c *CEM) Step(ctx context.Context, env envs.VecEnv, seed int64) (Iteration, error) {
	box, ok := env.ActionSpace().(envs.Box)
	if !ok {
		return Iteration{}, fmt.Errorf("cem: action space %v is not a Box", env.ActionSpace())
	}
	pop := make([][]float64, env.NumEnvs())
	for k := range pop {
		pop[k] = make([]float64, len(c.mean))
		for i := range pop[k] {
			pop[k][i] = c.mean[i] + c.std[i]*c.rng.NormFloat64()
		}
	}
	returns, err := play(ctx, env, box, pop, seed, c.MaxSteps)
	if err != nil {
		return Iteration{}, err
	}
	c.refit(pop, returns)
	mean := 0.0
	for _, r := range returns {
		mean += r / float64(len(returns))
	}
	return Iteration{Mean: mean, Best: slices.Max(returns)}, nil
}

// refit sets the mean and std to the elite members' (the std floored at MinStd).
func (c *CEM) refit(pop [][]float64, returns []float64) {
	order := make([]int, len(pop))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return -cmpFloat(returns[a], returns[b]) })
	elite := order[:min(c.Elite, len(order))]
	for i := range c.mean {
		m, v := 0.0, 0.0
		for _, k := range elite {
			m += pop[k][i] / float64(len(elite))
		}
		for _, k := range elite {
			v += (pop[k][i] - m) * (pop[k][i] - m) / float64(len(elite))
		}
		c.mean[i], c.std[i] = m, math.Max(math.Sqrt(v), c.MinStd)
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// play runs one episode per member (copy k plays pop[k]) and returns their undiscounted returns.
func play(ctx context.Context, env envs.VecEnv, box envs.Box, pop [][]float64, seed int64, maxSteps int) ([]float64, error) {
	n := env.NumEnvs()
	seeds := make([]int64, n)
	for i := range seeds {
		seeds[i] = seed + int64(i)
	}
	obs, _, err := env.Reset(ctx, envs.ResetRequest{Seeds: seeds})
	if err != nil {
		return nil, fmt.Errorf("cem: reset: %w", err)
	}
	obsDim, actDim := obs.RowSize(), box.FlatSize()
	returns := make([]float64, n)
	done := make([]bool, n)
	actions := envs.NewBatch(box, n)
	for t := 0; t < maxSteps && slices.Contains(done, false); t++ {
		for k := range n {
			w := pop[k]
			for j := range actDim {
				a := w[obsDim*actDim+j] // the bias
				for i := range obsDim {
					a += w[j*obsDim+i] * obs.Floats[k*obsDim+i]
				}
				actions.Floats[k*actDim+j] = math.Min(math.Max(a, box.Low[j]), box.High[j])
			}
		}
		res, err := env.Step(ctx, actions)
		if err != nil {
			return nil, fmt.Errorf("cem: step %d: %w", t, err)
		}
		for k := range n {
			if !done[k] {
				returns[k] += res.Rewards[k]
				done[k] = res.Terminated[k] || res.Truncated[k]
			}
		}
		obs = res.Obs
	}
	return returns, nil
}
