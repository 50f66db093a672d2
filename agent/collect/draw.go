package collect

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/policy"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// copyDraw is one copy's draw in a step: its uniform number in, its action and policy
// statistics out.
type copyDraw struct {
	u                float64
	action           int
	maxProb, support float32
	idle             bool // the copy has ended its episode and waits (Episodes)
	explored         bool // the action is an exploring one, not the policy's
	fallback         bool // the row needs the reference path (non-finite, or Tsallis)
}

// drawParallelMin is the number of logits per step (copies x |A|) from which a draw splits the
// copies over goroutines: below it a row pass costs about what handing it over does.
const drawParallelMin = 1 << 16

// act computes every copy's action into c.actions: the copies with idle[i] set (nil: none) take
// action 0 and draw nothing.
func (c *Collector[O]) act(mode Mode, idle []bool, rng *rand.Rand, b *Batch[O]) error {
	t0 := time.Now()
	head0, err := c.actor.Act(c.obs, c.prev)
	if err != nil {
		return fmt.Errorf("collect: %w", err)
	}
	if mode == Greedy {
		err = c.greedy(head0, idle)
	} else {
		err = c.draw(head0, idle, rng, b)
	}
	b.PolicySeconds += time.Since(t0).Seconds()
	return err
}

// greedy takes each playing copy's most likely action.
func (c *Collector[O]) greedy(head0 *tensor.Matrix, idle []bool) error {
	m := c.actor.Layout()
	for i := range c.n {
		c.actions.Ints[i] = 0
		if idle != nil && idle[i] {
			continue
		}
		m.Logits(c.z, head0.Row(i))
		if c.Watch != nil {
			c.Watch(c.z)
		}
		a := policy.Greedy(c.z, nil)
		if a < 0 {
			return fmt.Errorf("collect: copy %d: the policy has no valid action (non-finite logits?)", i)
		}
		c.actions.Ints[i] = int64(a)
	}
	return nil
}

// draw picks every playing copy's action from the policy of its row of head0 and records the
// policy statistics. The random numbers come from rng in copy order, each copy's exploring
// decision (under SetExplore) before its own draw. The copies' policies are computed in parallel
// by the float32 row kernels (the learner's fast path); each copy's action is the inverse of its
// policy's cumulative distribution at its number, exactly as policy.Sample does it, so the
// actions do not depend on the workers.
func (c *Collector[O]) draw(head0 *tensor.Matrix, idle []bool, rng *rand.Rand, b *Batch[O]) error {
	m := c.actor.Layout()
	if cap(c.draws) < c.n {
		c.draws = make([]copyDraw, c.n)
	}
	c.draws = c.draws[:c.n]
	for i := range c.draws {
		c.draws[i] = c.decide(i, idle != nil && idle[i], head0, rng)
	}
	workers := min(tensor.Workers(0), c.n)
	if c.n*c.K < drawParallelMin {
		workers = 1
	}
	if len(c.work) < workers {
		c.work = append(c.work, make([]pcl.RowScratch, workers-len(c.work))...)
	}
	run := func(w, lo, hi int) {
		for i := lo; i < hi; i++ {
			d := &c.draws[i]
			if d.idle {
				continue
			}
			a, mp, sup, ok := m.SampleRow(&c.work[w], head0.Row(i), d.u)
			d.maxProb, d.support, d.fallback = mp, sup, !ok
			if !d.explored {
				d.action = a
			}
		}
	}
	if workers > 1 {
		tensor.ParallelRows(c.n, 1, workers, tensor.RowFunc(run))
	} else {
		run(0, 0, c.n)
	}
	return c.record(head0, b)
}

// decide draws copy i's random numbers: an exploring action, or the uniform number its policy
// draw inverts.
func (c *Collector[O]) decide(i int, idle bool, head0 *tensor.Matrix, rng *rand.Rand) copyDraw {
	if idle {
		return copyDraw{idle: true}
	}
	// Only an exploring collector draws this number: without it the stream, and so every run,
	// stays what it was.
	if c.explore > 0 && i < c.explorer && rng.Float64() < c.explore {
		d := copyDraw{explored: true}
		if c.temp > 0 {
			c.actor.Layout().Logits(c.z, head0.Row(i))
			d.action = policy.SampleSoftmaxWithUniform(c.q, c.z, c.temp, rng.Float64())
		} else {
			d.action = rng.IntN(c.K)
		}
		return d
	}
	return copyDraw{u: rng.Float64()}
}

// record finishes the draws: the rows the kernels could not take go the reference path, and every
// playing copy's action and policy statistics are recorded.
func (c *Collector[O]) record(head0 *tensor.Matrix, b *Batch[O]) error {
	m := c.actor.Layout()
	for i := range c.draws {
		d := &c.draws[i]
		c.actions.Ints[i] = 0
		if d.idle {
			continue
		}
		if d.fallback {
			m.Probs(c.p, c.z, head0.Row(i))
			if !d.explored {
				d.action = policy.SampleWithUniform(c.p, d.u)
			}
			d.maxProb, d.support = pcl.RowStats(c.p)
		}
		if d.action < 0 {
			return fmt.Errorf("collect: copy %d: the policy has no valid action (non-finite logits?)", i)
		}
		if d.explored {
			b.Explored++
		}
		b.Stats.AddRow(d.maxProb, d.support)
		c.window.add(d.maxProb, d.support)
		c.actions.Ints[i] = int64(d.action)
	}
	return nil
}
