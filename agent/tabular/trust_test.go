package tabular

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/policy"
)

// laggedPolicy is a lagged policy for m: a softmax of random logits (every action positive, as
// the relative entropy needs) or, sparse, a sparsemax of them (some actions at 0).
func laggedPolicy(m *MDP, seed uint64, sparse bool) []float64 {
	rng := rand.New(rand.NewPCG(seed, 77))
	A := m.Actions
	out := make([]float64, m.States*A)
	z := make([]float64, A)
	for s := range m.States {
		for a := range z {
			z[a] = 2 * rng.NormFloat64()
		}
		if sparse {
			policy.Sparsemax(out[s*A:(s+1)*A], z, nil)
		} else {
			policy.Softmax(out[s*A:(s+1)*A], z, nil)
		}
	}
	return out
}

// randomSimplex is a random point of the simplex, sometimes with zeros.
func randomSimplex(rng *rand.Rand, dst []float64) {
	sum := 0.0
	for i := range dst {
		dst[i] = rng.ExpFloat64()
		if rng.IntN(4) == 0 {
			dst[i] = 0
		}
		sum += dst[i]
	}
	if sum == 0 {
		dst[rng.IntN(len(dst))], sum = 1, 1
	}
	for i := range dst {
		dst[i] /= sum
	}
}

// The trust region's consistency holds at the exact optimum of the trust-region objective: the
// optimum found by value iteration (V the objective at the closed-form maximiser, which beats
// random points of the simplex), and every step of the consistency at the weight α + λ with the
// lagged policy's shift. Dropping any term of the shift, or keeping α instead of α + λ, breaks it.
func TestTrustRegionConsistencyAtOptimum(t *testing.T) {
	const weight, lambda = 0.5, 0.3
	for _, seed := range seeds[:3] {
		m := randomMDP(t, seed)
		A := m.Actions
		for _, tc := range []struct {
			name string
			obj  Objective
		}{{"soft", Soft(weight)}, {"sparse", Sparse(weight)}} {
			sparse := tc.obj.Alpha == 2
			tr := TrustRegion{Lambda: lambda, Lagged: laggedPolicy(m, seed, sparse)}
			sol, err := TrustValueIteration(m, tc.obj, tr, 1e-13, 5000)
			if err != nil {
				t.Fatal(err)
			}
			// The closed form is the maximiser: no random point of the simplex does better.
			rng := rand.New(rand.NewPCG(seed, 3))
			pi := make([]float64, A)
			for s := range m.States {
				q, opt, lagged := sol.Q[s*A:(s+1)*A], sol.Policy[s*A:(s+1)*A], tr.Lagged[s*A:(s+1)*A]
				best := tr.StateObjective(tc.obj, opt, q, lagged)
				if math.Abs(best-sol.V[s]) > 1e-9 {
					t.Fatalf("%s seed %d state %d: V %v, objective at the policy %v", tc.name, seed, s, sol.V[s], best)
				}
				for range 300 {
					randomSimplex(rng, pi)
					if sparse || !hasZero(pi) {
						if j := tr.StateObjective(tc.obj, pi, q, lagged); j > best+1e-12 {
							t.Fatalf("%s seed %d state %d: %v beats the closed form (%v > %v)", tc.name, seed, s, pi, j, best)
						}
					}
				}
			}
			var terms map[string]StepTerm
			if sparse {
				mult := OptimalTrustSparseMultipliers(m, sol, tr)
				if v := MultiplierViolation(m, weight+lambda, sol.Policy, mult); v > 1e-12 {
					t.Fatalf("sparse seed %d: multipliers violate their constraints by %v", seed, v)
				}
				full := TrustSparseTerms(m, weight, tr, sol.Policy, mult)
				sumSq := func(s int) float64 {
					var sq float64
					for b := range A {
						sq += tr.Lagged[s*A+b] * tr.Lagged[s*A+b]
					}
					return sq
				}
				terms = map[string]StepTerm{
					"":                   full,
					"without λπ̃(a)":     func(s, a int) float64 { return full(s, a) - lambda*tr.Lagged[s*A+a] },
					"without (λ/2)‖π̃‖²": func(s, a int) float64 { return full(s, a) + lambda/2*sumSq(s) },
					"without λ/2":        func(s, a int) float64 { return full(s, a) + lambda/2 },
					"α in place of α + λ": func(s, a int) float64 {
						return full(s, a) - lambda/2 + lambda*sol.Policy[s*A+a]
					},
					"the paper's step alone": SparseTerms(m, weight, sol.Policy, mult),
				}
			} else {
				full := TrustSoftTerms(m, weight, tr, sol.Policy)
				terms = map[string]StepTerm{
					"":                 full,
					"without λ log π̃": func(s, a int) float64 { return full(s, a) - lambda*math.Log(tr.Lagged[s*A+a]) },
					"τ in place of τ + λ": func(s, a int) float64 {
						return full(s, a) - lambda*math.Log(sol.Policy[s*A+a])
					},
					"the soft step alone": SoftTerms(m, weight, sol.Policy),
				}
			}
			for name, term := range terms {
				v := OneStepViolation(m, sol.V, term)
				switch {
				case name == "" && v > 1e-9:
					t.Errorf("%s seed %d: the trust-region consistency is violated by %v at the optimum", tc.name, seed, v)
				case name != "" && v < 1e-3:
					t.Errorf("%s seed %d: %s still consistent (violation %v): the test cannot see that term", tc.name, seed, name, v)
				}
			}
			if v, err := MultiStepViolation(m, sol.V, terms[""], 3); err != nil || v > 1e-9 {
				t.Errorf("%s seed %d: 3-step violation %v (%v)", tc.name, seed, v, err)
			}
		}
	}
}

func hasZero(p []float64) bool {
	for _, v := range p {
		if v == 0 {
			return true
		}
	}
	return false
}
