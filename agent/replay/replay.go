// Package replay is the one replay of both network families: trajectories (whole episodes of the
// algorithmic tasks, or sub-episodes cut from a continuing env) held up to a capacity, each with a
// priority, and sampled without replacement by a Draw:
//
//   - Mixture, the paper's episode replay: p_i = uniform * 1/N + (1 - uniform) *
//     softmax(alpha * priority)_i, which is how we read its "0.1 + 0.9 * exp(alpha R)/Z" (uniform
//     0.1, alpha 0.5), with the episode's total reward (the paper) or its collection iteration
//     (recency, what the released pcl_rl code effectively did) as the priority;
//   - Recency, the paper's HalfCheetah replay: p_i proportional to exp(weight * (iteration_i -
//     newest iteration)), with the iteration as the priority.
//
// What it evicts to make room is the Capacity's: a trajectory at random or the oldest slot once
// full of trajectories, or the oldest while above a number of env steps.
package replay

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/sparsepcl/sparsepcl/agent/episode"
)

// Buffer holds trajectories with priorities. It is not safe for concurrent use.
type Buffer[O episode.Observation] struct {
	keep  Capacity
	draw  Draw
	items []*episode.Trajectory[O]
	prio  []float64
	steps int // env steps held
	next  int // next FIFO slot once full
}

// Eviction is what a full buffer drops to make room.
type Eviction int

const (
	// EvictRandom drops a stored trajectory uniformly at random once Limit trajectories are held
	// (the paper's episode replay).
	EvictRandom Eviction = iota
	// EvictFIFO drops the oldest slot once Limit trajectories are held.
	EvictFIFO
	// EvictOldest drops the oldest trajectories while more than Limit env steps are held; the
	// newest is kept even when it alone is above the limit (the long-episode replay).
	EvictOldest
)

// Capacity is how much a buffer holds, and what it evicts to make room.
type Capacity struct {
	Limit int // trajectories, or env steps for EvictOldest
	Evict Eviction
	// Whole makes Add refuse a trajectory that is not a whole episode (terminated or truncated).
	Whole bool
}

// Episodes is a capacity of limit whole episodes with eviction "random" or "fifo".
func Episodes(limit int, eviction string) (Capacity, error) {
	c := Capacity{Limit: limit, Whole: true}
	switch eviction {
	case "random":
		c.Evict = EvictRandom
	case "fifo":
		c.Evict = EvictFIFO
	default:
		return c, fmt.Errorf("replay: eviction %q, want \"random\" or \"fifo\"", eviction)
	}
	return c, nil
}

// Steps is a capacity of limit env steps of trajectories, the oldest evicted first.
func Steps(limit int) Capacity { return Capacity{Limit: limit, Evict: EvictOldest} }

// New returns an empty buffer that keeps keep and samples by draw.
func New[O episode.Observation](keep Capacity, draw Draw) (*Buffer[O], error) {
	if keep.Limit < 1 {
		return nil, fmt.Errorf("replay: capacity %d, want >= 1", keep.Limit)
	}
	if keep.Evict < EvictRandom || keep.Evict > EvictOldest {
		return nil, fmt.Errorf("replay: unknown eviction %d", keep.Evict)
	}
	if err := draw.validate(); err != nil {
		return nil, err
	}
	return &Buffer[O]{keep: keep, draw: draw}, nil
}

// Len is the number of stored trajectories; Steps the env steps they hold.
func (b *Buffer[O]) Len() int   { return len(b.items) }
func (b *Buffer[O]) Steps() int { return b.steps }

// Capacity is what the buffer holds at most.
func (b *Buffer[O]) Capacity() Capacity { return b.keep }

// Add stores t with the given priority, evicting as the capacity says. rng draws the slot a full
// buffer of trajectories evicts (a buffer that evicts the oldest steps does not use it: nil will do).
func (b *Buffer[O]) Add(rng *rand.Rand, t *episode.Trajectory[O], priority float64) error {
	if b.keep.Whole && t.Terminated == t.Truncated {
		return fmt.Errorf("replay: episode terminated %v and truncated %v, want a whole episode (one of the two)", t.Terminated, t.Truncated)
	}
	if math.IsNaN(priority) || math.IsInf(priority, 0) {
		return fmt.Errorf("replay: priority %v is not finite", priority)
	}
	if b.keep.Evict == EvictOldest {
		b.addDroppingOldest(t, priority)
		return nil
	}
	if len(b.items) < b.keep.Limit {
		b.items, b.prio, b.steps = append(b.items, t), append(b.prio, priority), b.steps+t.Len()
		return nil
	}
	// Drawn for FIFO eviction too: the random stream, and so every run's batches, stay what they
	// were whichever the eviction.
	slot := rng.IntN(b.keep.Limit)
	if b.keep.Evict == EvictFIFO {
		slot = b.next
		b.next = (b.next + 1) % b.keep.Limit
	}
	b.steps += t.Len() - b.items[slot].Len()
	b.items[slot], b.prio[slot] = t, priority
	return nil
}

// addDroppingOldest appends t and drops the oldest trajectories while above the step limit.
func (b *Buffer[O]) addDroppingOldest(t *episode.Trajectory[O], priority float64) {
	b.items, b.prio = append(b.items, t), append(b.prio, priority)
	b.steps += t.Len()
	drop := 0
	for b.steps > b.keep.Limit && drop < len(b.items)-1 {
		b.steps -= b.items[drop].Len()
		drop++
	}
	if drop > 0 {
		b.items = append(b.items[:0], b.items[drop:]...)
		b.prio = append(b.prio[:0], b.prio[drop:]...)
	}
}

// Probabilities returns the sampling distribution over the stored trajectories (in storage order).
func (b *Buffer[O]) Probabilities() []float64 { return b.draw.Probabilities(b.prio) }

// Sample draws min(n, Len()) distinct trajectories, without replacement, by the buffer's Draw.
func (b *Buffer[O]) Sample(rng *rand.Rand, n int) []*episode.Trajectory[O] {
	idx := b.draw.sample(rng, b.prio, min(n, len(b.items)))
	out := make([]*episode.Trajectory[O], len(idx))
	for j, i := range idx {
		out[j] = b.items[i]
	}
	return out
}

// Count returns how many stored trajectories satisfy keep (for instrumentation: e.g. how many
// rewarded episodes the buffer holds). keep sees them in storage order, the order of
// Probabilities.
func (b *Buffer[O]) Count(keep func(*episode.Trajectory[O]) bool) int {
	n := 0
	for _, t := range b.items {
		if keep(t) {
			n++
		}
	}
	return n
}

// NewEpisodes is the paper's episode replay: capacity whole episodes of tokens, evicted by
// eviction ("random" or "fifo"), drawn by Mixture{alpha, uniform}.
func NewEpisodes(capacity int, alpha, uniform float64, eviction string) (*Buffer[int32], error) {
	keep, err := Episodes(capacity, eviction)
	if err != nil {
		return nil, err
	}
	return New[int32](keep, Mixture{Alpha: alpha, Uniform: uniform})
}
