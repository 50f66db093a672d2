package pcl

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/policy"
)

// On a small deterministic MDP solved exactly by sparse value iteration (V = alpha spmax(Q/alpha)),
// the sparse per-step term with the multipliers at their optimal values (exp(head) = alpha,
// Lambda = -(alpha/2) sum mu^2) makes every one-step consistency -V(s) + r + gamma V(s') + term ~ 0,
// on and off the policy's support; a wrong sign or factor in the term would break it.
// (agent/tabular was not available yet; the solver here is the 10-line value iteration.)
func TestSparseConsistencyZeroAtTabularOptimum(t *testing.T) {
	const S, A, gamma = 5, 4, 0.9
	for _, alpha := range []float64{0.1, 0.5, 2} {
		rng := rand.New(rand.NewPCG(7, uint64(alpha*10)))
		next := make([][]int, S)
		r := make([][]float64, S)
		for s := range next {
			next[s], r[s] = make([]int, A), make([]float64, A)
			for a := range next[s] {
				next[s][a], r[s][a] = rng.IntN(S), rng.NormFloat64()
			}
		}
		V := make([]float64, S)
		q := func(s int) []float64 {
			z := make([]float64, A)
			for a := range z {
				z[a] = (r[s][a] + gamma*V[next[s][a]]) / alpha
			}
			return z
		}
		for it := 0; it < 2000; it++ {
			for s := range V {
				V[s] = alpha * policy.Spmax(q(s), nil, make([]float64, A))
			}
		}
		offSupport := 0
		for s := 0; s < S; s++ {
			z := q(s)
			p := make([]float64, A)
			tau, _ := policy.Sparsemax(p, z, nil)
			sq := 0.0
			for _, x := range p {
				sq += x * x
			}
			bigHead := math.Log(sq / (1 - sq)) // sigmoid(bigHead) = sum mu^2
			if sq >= 1 {
				bigHead = 40
			}
			for a := 0; a < A; a++ {
				if p[a] == 0 {
					offSupport++
				}
				res := policy.SparseStep(make([]float64, A), policy.SparseRow[float64]{Z: z, P: p, Tau: tau}, a, alpha, math.Log(alpha), bigHead, 0)
				c := -V[s] + r[s][a] + gamma*V[next[s][a]] + res.Value
				if math.Abs(c) > 1e-6 {
					t.Errorf("alpha %v state %d action %d (pi %.3f): consistency %v, want 0", alpha, s, a, p[a], c)
				}
			}
		}
		if alpha == 0.1 && offSupport == 0 {
			t.Errorf("alpha %v: no action off the support; the test does not cover lambda", alpha)
		}
	}
}
