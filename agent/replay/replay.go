// Package replay is the prioritised episode replay buffer of PCL: whole episodes, a fixed capacity
// with random (or FIFO) eviction, and sampling without replacement from the mixture
//
//	p_i = uniform * 1/N + (1 - uniform) * softmax(alpha * priority)_i,
//
// which is how we read the paper's "0.1 + 0.9 * exp(alpha R)/Z" (uniform = 0.1, alpha = 0.5). The
// priority is whatever the caller passes: the episode's total reward (the paper) or its collection
// iteration (recency, what the released pcl_rl code effectively did).
package replay

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/sparsepcl/sparsepcl/agent/episode"
)

// Buffer holds episodes with priorities. It is not safe for concurrent use.
type Buffer struct {
	capacity int
	alpha    float64
	uniform  float64
	fifo     bool
	next     int // next FIFO slot once full
	eps      []*episode.Episode
	prio     []float64
}

// New returns an empty buffer. eviction is "random" or "fifo".
func New(capacity int, alpha, uniform float64, eviction string) (*Buffer, error) {
	if capacity < 1 {
		return nil, fmt.Errorf("replay: capacity %d, want >= 1", capacity)
	}
	if !(alpha >= 0) || !(uniform >= 0 && uniform <= 1) {
		return nil, fmt.Errorf("replay: alpha %v (want >= 0) or uniform weight %v (want [0, 1]) out of range", alpha, uniform)
	}
	if eviction != "random" && eviction != "fifo" {
		return nil, fmt.Errorf("replay: eviction %q, want \"random\" or \"fifo\"", eviction)
	}
	return &Buffer{capacity: capacity, alpha: alpha, uniform: uniform, fifo: eviction == "fifo"}, nil
}

// Len is the number of stored episodes.
func (b *Buffer) Len() int { return len(b.eps) }

// Capacity is the maximum number of episodes.
func (b *Buffer) Capacity() int { return b.capacity }

// Add stores ep, a whole episode (terminated or truncated), with the given priority, evicting one
// stored episode (uniformly at random, or the oldest slot for FIFO) when full.
func (b *Buffer) Add(rng *rand.Rand, ep *episode.Episode, priority float64) error {
	if ep.Terminated == ep.Truncated {
		return fmt.Errorf("replay: episode terminated %v and truncated %v, want a whole episode (one of the two)", ep.Terminated, ep.Truncated)
	}
	if math.IsNaN(priority) || math.IsInf(priority, 0) {
		return fmt.Errorf("replay: priority %v is not finite", priority)
	}
	if len(b.eps) < b.capacity {
		b.eps = append(b.eps, ep)
		b.prio = append(b.prio, priority)
		return nil
	}
	slot := rng.IntN(b.capacity)
	if b.fifo {
		slot = b.next
		b.next = (b.next + 1) % b.capacity
	}
	b.eps[slot], b.prio[slot] = ep, priority
	return nil
}

// Probabilities returns the sampling distribution over the stored episodes (in storage order).
func (b *Buffer) Probabilities() []float64 {
	n := len(b.eps)
	p := make([]float64, n)
	if n == 0 {
		return p
	}
	maxP := math.Inf(-1)
	for _, v := range b.prio {
		maxP = max(maxP, b.alpha*v)
	}
	z := 0.0
	for i, v := range b.prio {
		p[i] = math.Exp(b.alpha*v - maxP)
		z += p[i]
	}
	for i := range p {
		p[i] = b.uniform/float64(n) + (1-b.uniform)*p[i]/z
	}
	return p
}

// Sample draws min(n, Len()) distinct episodes, sequentially without replacement with probability
// proportional to Probabilities (as numpy's choice(replace=False)), using Efraimidis-Spirakis keys.
func (b *Buffer) Sample(rng *rand.Rand, n int) []*episode.Episode {
	p := b.Probabilities()
	n = min(n, len(p))
	type keyed struct {
		key float64
		i   int
	}
	keys := make([]keyed, len(p))
	for i, pi := range p {
		// key = u^(1/p), compared in log space: log(u)/p; larger is better.
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		k := math.Inf(-1)
		if pi > 0 {
			k = math.Log(u) / pi
		}
		keys[i] = keyed{k, i}
	}
	sort.Slice(keys, func(a, c int) bool { return keys[a].key > keys[c].key })
	out := make([]*episode.Episode, n)
	for j := 0; j < n; j++ {
		out[j] = b.eps[keys[j].i]
	}
	return out
}
