package collect

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/episode"
)

// Segments takes steps env steps in every copy from where it stands, drawing actions from the
// policy with rng, and cuts what each copy did into sub-episodes tagged with iteration. A copy
// whose episode has ended is reset before its next step with a seed derived from Options.Seed,
// the iteration, the copy and the step, so a run is a function of its seed. The sub-episodes of
// the episodes that ended are in Batch.Ended (FillReturnsToGo). Batch.Observations is valid until
// the next call.
func (c *Collector[O]) Segments(ctx context.Context, rng *rand.Rand, steps, iteration int) (Batch[O], error) {
	var b Batch[O]
	b.Observations = c.seen[:0]
	defer func() { c.seen = b.Observations }()
	D := c.enc.Dim()
	for t := range steps {
		if err := ctx.Err(); err != nil {
			return b, fmt.Errorf("collect: sampling: %w", err)
		}
		if err := c.resetEnded(ctx, iteration, t, &b); err != nil {
			return b, err
		}
		if err := c.act(Sample, nil, rng, &b); err != nil {
			return b, err
		}
		t0 := time.Now()
		res, err := c.env.Step(ctx, c.actions)
		b.EnvSeconds += time.Since(t0).Seconds()
		if err != nil {
			return b, fmt.Errorf("collect: step: %w", err)
		}
		for i := range c.n {
			seg := c.cur[i]
			row := c.obs[i*D : (i+1)*D]
			if err := c.enc.Encode(row, res.Obs, i); err != nil {
				return b, err
			}
			b.Observations = append(b.Observations, row...)
			a := int32(c.actions.Ints[i])
			seg.Actions = append(seg.Actions, a)
			seg.Rewards = append(seg.Rewards, res.Rewards[i])
			seg.Obs = append(seg.Obs, row...)
			c.prev[i] = a
			c.epReturn[i] += res.Rewards[i]
			c.epLen[i]++
			b.EnvSteps++
			if res.Terminated[i] || res.Truncated[i] {
				seg.Terminated, seg.Truncated = res.Terminated[i], !res.Terminated[i]
				b.Trajectories = append(b.Trajectories, seg)
				b.Returns = append(b.Returns, c.epReturn[i])
				b.Lengths = append(b.Lengths, c.epLen[i])
				b.Ended = append(b.Ended, c.episode[i])
				c.cur[i], c.episode[i] = nil, nil
			}
		}
	}
	c.cut(steps, iteration, &b)
	return b, nil
}

// cut ends the sub-episode of every copy whose episode goes on and starts its next one, tagged
// with the next iteration.
func (c *Collector[O]) cut(steps, iteration int, b *Batch[O]) {
	D := c.enc.Dim()
	for i, seg := range c.cur {
		if seg == nil || seg.Len() == 0 {
			continue
		}
		b.Trajectories = append(b.Trajectories, seg)
		last := c.obs[i*D : (i+1)*D]
		c.cur[i] = &episode.Trajectory[O]{Obs: append(make([]O, 0, (steps+1)*D), last...), Iteration: iteration + 1}
		c.episode[i] = append(c.episode[i], c.cur[i])
	}
}

// resetEnded resets the copies that have no current sub-episode and starts their episodes.
func (c *Collector[O]) resetEnded(ctx context.Context, it, t int, b *Batch[O]) error {
	some := false
	for i, cur := range c.cur {
		c.resetReq.Mask[i], c.fresh[i] = cur == nil, cur == nil
		if cur == nil {
			c.resetReq.Seeds[i] = c.seedFor(it, i, t)
			some = true
		}
	}
	if !some {
		return nil
	}
	t0 := time.Now()
	obs, _, err := c.env.Reset(ctx, c.resetReq)
	b.EnvSeconds += time.Since(t0).Seconds()
	if err != nil {
		return fmt.Errorf("collect: reset: %w", err)
	}
	D := c.enc.Dim()
	for i, cur := range c.cur {
		if cur != nil {
			continue
		}
		row := c.obs[i*D : (i+1)*D]
		if err := c.enc.Encode(row, obs, i); err != nil {
			return err
		}
		b.Observations = append(b.Observations, row...)
		c.cur[i] = &episode.Trajectory[O]{Obs: append([]O(nil), row...), Iteration: it}
		c.episode[i] = append(c.episode[i][:0], c.cur[i])
		c.epReturn[i], c.epLen[i], c.prev[i] = 0, 0, -1
	}
	c.actor.Begin(c.fresh)
	return nil
}

// seedFor derives the reset seed of copy i at step t of iteration it.
func (c *Collector[O]) seedFor(it, i, t int) int64 {
	x := uint64(c.opts.Seed)*0x9e3779b97f4a7c15 ^ uint64(it)*0xbf58476d1ce4e5b9 ^ uint64(i)*0x94d049bb133111eb ^ uint64(t)*0xd6e9f8cc4f2a8e4b
	x ^= x >> 31
	x *= 0xd6e9f8cc4f2a8e4b
	x ^= x >> 29
	return int64(x >> 33)
}

// MidEpisode reports how many copies are in the middle of an episode (Segments).
func (c *Collector[O]) MidEpisode() int {
	k := 0
	for _, cur := range c.cur {
		if cur != nil {
			k++
		}
	}
	return k
}

// FillReturnsToGo sets the discounted returns to go (a diagnostic: the critic's target scale) of
// the sub-episodes of each episode in ended (Batch.Ended), given in order. It writes into
// sub-episodes that earlier calls returned, so it belongs to whoever owns those: a collector
// running beside the training steps leaves it to the trainer.
func FillReturnsToGo[O episode.Observation](ended [][]*episode.Trajectory[O], gamma float64) {
	for _, segs := range ended {
		g := 0.0
		for k := len(segs) - 1; k >= 0; k-- {
			s := segs[k]
			s.ReturnToGo = make([]float64, s.Len())
			for t := s.Len() - 1; t >= 0; t-- {
				g = s.Rewards[t] + gamma*g
				s.ReturnToGo[t] = g
			}
		}
	}
}
