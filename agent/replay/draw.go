package replay

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Draw is how a buffer samples: a distribution over its trajectories' priorities and a draw of
// distinct ones from it. Mixture and Recency are the two.
type Draw interface {
	// Probabilities is the distribution over prio (in storage order).
	Probabilities(prio []float64) []float64
	// sample draws n distinct indices of prio (n <= len(prio)).
	sample(rng *rand.Rand, prio []float64, n int) []int
	validate() error
}

// Mixture is the paper's episode replay: uniform/N + (1 - uniform) * softmax(Alpha * priority),
// drawn sequentially without replacement (as numpy's choice(replace=False)) with
// Efraimidis-Spirakis keys.
type Mixture struct{ Alpha, Uniform float64 }

func (m Mixture) validate() error {
	if !(m.Alpha >= 0) || !(m.Uniform >= 0 && m.Uniform <= 1) {
		return fmt.Errorf("replay: alpha %v (want >= 0) or uniform weight %v (want [0, 1]) out of range", m.Alpha, m.Uniform)
	}
	return nil
}

// Probabilities is the mixture over prio.
func (m Mixture) Probabilities(prio []float64) []float64 {
	n := len(prio)
	p := make([]float64, n)
	if n == 0 {
		return p
	}
	maxP := math.Inf(-1)
	for _, v := range prio {
		maxP = max(maxP, m.Alpha*v)
	}
	z := 0.0
	for i, v := range prio {
		p[i] = math.Exp(m.Alpha*v - maxP)
		z += p[i]
	}
	for i := range p {
		p[i] = m.Uniform/float64(n) + (1-m.Uniform)*p[i]/z
	}
	return p
}

func (m Mixture) sample(rng *rand.Rand, prio []float64, n int) []int {
	p := m.Probabilities(prio)
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
	out := make([]int, n)
	for j := range n {
		out[j] = keys[j].i
	}
	return out
}

// Recency is the long-episode replay: trajectory i, whose priority is the iteration that collected
// it, is drawn with probability proportional to exp(Weight * (iteration_i - newest iteration)),
// one after another without replacement (the paper's HalfCheetah setting: Weight 0.01; 0 is
// uniform).
type Recency struct{ Weight float64 }

func (r Recency) validate() error {
	if !(r.Weight >= 0) || math.IsInf(r.Weight, 0) {
		return fmt.Errorf("replay: recency weight %v, want a finite value >= 0", r.Weight)
	}
	return nil
}

// weights are the unnormalised recency weights of prio.
func (r Recency) weights(prio []float64) []float64 {
	newest := math.Inf(-1)
	for _, v := range prio {
		newest = max(newest, v)
	}
	w := make([]float64, len(prio))
	for i, v := range prio {
		w[i] = math.Exp(r.Weight * (v - newest))
	}
	return w
}

// Probabilities is the recency distribution over prio.
func (r Recency) Probabilities(prio []float64) []float64 {
	w := r.weights(prio)
	total := 0.0
	for _, x := range w {
		total += x
	}
	for i := range w {
		w[i] /= total
	}
	return w
}

func (r Recency) sample(rng *rand.Rand, prio []float64, n int) []int {
	if n == 0 {
		return nil
	}
	w := r.weights(prio)
	total := 0.0
	for _, x := range w {
		total += x
	}
	out := make([]int, 0, n)
	for range n {
		u := rng.Float64() * total
		pick := -1
		for i, x := range w {
			if x == 0 {
				continue
			}
			pick = i
			if u < x {
				break
			}
			u -= x
		}
		out = append(out, pick)
		total -= w[pick]
		w[pick] = 0
	}
	return out
}
