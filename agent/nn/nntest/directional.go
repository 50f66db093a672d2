// Package nntest holds the finite-difference checks that hand-written gradients are held to, for
// tests: a whole network's gradient along random directions (the learners'), and a layer's or a
// network's gradient element by element (Problem).
package nntest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/nn"
)

// CheckDirectional compares the gradient params hold (their Grad, of loss at their current
// values) with central finite differences of loss along trials random directions: the
// directional derivative Σ d·∇ against (loss(θ + hd) − loss(θ − hd)) / 2h, within 2% plus 1e-3.
// loss must not touch the gradients; params are restored after each evaluation. label names the
// case in a failure.
func CheckDirectional(t testing.TB, params []*nn.Param, loss func() float64, rng *rand.Rand, trials int, label string) {
	t.Helper()
	for trial := range trials {
		dir := make([][]float32, len(params))
		analytic := 0.0
		for j, p := range params {
			dir[j] = make([]float32, len(p.Value.Data))
			for k := range dir[j] {
				dir[j][k] = float32(rng.NormFloat64())
				analytic += float64(dir[j][k]) * float64(p.Grad.Data[k])
			}
		}
		at := func(h float64) float64 {
			saved := make([][]float32, len(params))
			for j, p := range params {
				saved[j] = append([]float32(nil), p.Value.Data...)
				for k := range p.Value.Data {
					p.Value.Data[k] += float32(h) * dir[j][k]
				}
			}
			defer func() {
				for j, p := range params {
					copy(p.Value.Data, saved[j])
				}
			}()
			return loss()
		}
		// The best of a few step sizes: float32 noise grows as h shrinks, and a support change of
		// a sparse policy (a kink) inside [-h, h] spoils large h.
		best, fd := math.Inf(1), 0.0
		for _, h := range []float64{4e-3, 2e-3, 1e-3, 5e-4} {
			f := (at(h) - at(-h)) / (2 * h)
			if d := math.Abs(f - analytic); d < best {
				best, fd = d, f
			}
		}
		if math.Abs(fd-analytic) > 0.02*math.Abs(fd)+1e-3 {
			t.Errorf("%s trial %d: directional derivative %v, finite difference %v", label, trial, analytic, fd)
		}
	}
}
