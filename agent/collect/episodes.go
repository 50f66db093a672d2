package collect

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/episode"
	"github.com/sparsepcl/sparsepcl/envs"
)

// Episodes plays one episode in every copy, copy i reset from seed seedBase+i, so a batch is a
// function of the network, seedBase and rng alone (and the env's curriculum). The copies step in
// lockstep; one that has ended waits (taking action 0) until every copy has. Actions are chosen
// by mode, drawn with rng (unused when greedy), and the episodes are tagged with iteration. It
// leaves every copy ended: a Segments call after it resets them all.
func (c *Collector[O]) Episodes(ctx context.Context, rng *rand.Rand, mode Mode, iteration int, seedBase int64) (Batch[O], error) {
	var b Batch[O]
	eps, err := c.startEpisodes(ctx, iteration, seedBase, &b)
	if err != nil {
		return b, err
	}
	done := make([]bool, c.n)
	for live := c.n; live > 0; {
		if err := ctx.Err(); err != nil {
			return b, fmt.Errorf("collect: %w", err)
		}
		if err := c.act(mode, done, rng, &b); err != nil {
			return b, err
		}
		t0 := time.Now()
		out, err := c.env.Step(ctx, c.actions)
		b.EnvSeconds += time.Since(t0).Seconds()
		if err != nil {
			return b, fmt.Errorf("collect: step: %w", err)
		}
		ended, err := c.recordEpisodes(eps, done, out, &b)
		if err != nil {
			return b, err
		}
		live -= ended
	}
	b.Trajectories = eps
	for i, e := range eps {
		b.Returns = append(b.Returns, c.epReturn[i])
		b.Lengths = append(b.Lengths, e.Len())
		c.cur[i], c.episode[i] = nil, nil
	}
	return b, nil
}

// startEpisodes resets every copy, copy i from seed seedBase + i, and starts its episode.
func (c *Collector[O]) startEpisodes(ctx context.Context, iteration int, seedBase int64, b *Batch[O]) ([]*episode.Trajectory[O], error) {
	req := envs.ResetRequest{Seeds: make([]int64, c.n)}
	for i := range req.Seeds {
		req.Seeds[i] = seedBase + int64(i)
	}
	t0 := time.Now()
	obs, _, err := c.env.Reset(ctx, req)
	b.EnvSeconds += time.Since(t0).Seconds()
	if err != nil {
		return nil, fmt.Errorf("collect: reset: %w", err)
	}
	D := c.enc.Dim()
	eps := make([]*episode.Trajectory[O], c.n)
	b.Observations = make([]O, 0, c.n*D)
	for i := range eps {
		row := c.obs[i*D : (i+1)*D]
		if err := c.enc.Encode(row, obs, i); err != nil {
			return nil, err
		}
		b.Observations = append(b.Observations, row...)
		eps[i] = &episode.Trajectory[O]{Obs: append([]O(nil), row...), Iteration: iteration}
		c.prev[i], c.fresh[i], c.epReturn[i] = -1, true, 0
	}
	c.actor.Begin(c.fresh)
	return eps, nil
}

// recordEpisodes appends the step's outcome to the episodes still playing and returns how many
// ended.
func (c *Collector[O]) recordEpisodes(eps []*episode.Trajectory[O], done []bool, out envs.StepResult, b *Batch[O]) (ended int, err error) {
	D := c.enc.Dim()
	for i, e := range eps {
		if done[i] {
			continue
		}
		row := c.obs[i*D : (i+1)*D]
		if err := c.enc.Encode(row, out.Obs, i); err != nil {
			return ended, err
		}
		b.Observations = append(b.Observations, row...)
		a := int32(c.actions.Ints[i])
		e.Actions = append(e.Actions, a)
		e.Rewards = append(e.Rewards, out.Rewards[i])
		e.Obs = append(e.Obs, row...)
		c.prev[i] = a
		c.epReturn[i] += out.Rewards[i]
		b.EnvSteps++
		switch {
		case out.Terminated[i]:
			e.Terminated, done[i] = true, true
		case out.Truncated[i] || (c.opts.MaxSteps > 0 && e.Len() >= c.opts.MaxSteps):
			e.Truncated, done[i] = true, true
		}
		if done[i] {
			ended++
		}
	}
	return ended, nil
}
