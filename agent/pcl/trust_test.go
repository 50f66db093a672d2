package pcl

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/policy"
	"github.com/sparsepcl/sparsepcl/agent/tabular"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// The objective's step with a trust region is the tabular oracle's: at the exact optimum of a
// trust-region MDP (tabular.TrustValueIteration), heads that encode the optimal policy, its
// multipliers and the lagged policy give, on both paths, the per-step terms under which the
// consistency holds (tabular.TrustSoftTerms, TrustSparseTerms).
func TestTrustRegionStepAtTabularOptimum(t *testing.T) {
	const weight, lambda = 0.5, 0.3
	m, err := tabular.RandomMDP(4, 5, 6, 3, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	S, A := m.States, m.Actions
	for _, algo := range []config.Algo{config.AlgoSoft, config.AlgoSparse} {
		sparse := algo == config.AlgoSparse
		obj := tabular.Soft(weight)
		if sparse {
			obj = tabular.Sparse(weight)
		}
		rng := rand.New(rand.NewPCG(5, 6))
		tr := tabular.TrustRegion{Lambda: lambda, Lagged: make([]float64, S*A)}
		z := make([]float64, A)
		for s := range S {
			for a := range z {
				z[a] = 2 * rng.NormFloat64()
			}
			if sparse {
				policy.Sparsemax(tr.Lagged[s*A:(s+1)*A], z, nil)
			} else {
				policy.Softmax(tr.Lagged[s*A:(s+1)*A], z, nil)
			}
		}
		sol, err := tabular.TrustValueIteration(m, obj, tr, 1e-13, 5000)
		if err != nil {
			t.Fatal(err)
		}
		var want tabular.StepTerm
		var mult tabular.SparseMultipliers
		if sparse {
			mult = tabular.OptimalTrustSparseMultipliers(m, sol, tr)
			want = tabular.TrustSparseTerms(m, weight, tr, sol.Policy, mult)
		} else {
			want = tabular.TrustSoftTerms(m, weight, tr, sol.Policy)
		}
		if v := tabular.OneStepViolation(m, sol.V, want); v > 1e-9 {
			t.Fatalf("%s: the oracle's consistency is violated by %v", algo, v)
		}
		cfg := testConfig(algo, config.FormSeparate)
		cfg.Alpha, cfg.TargetLag, cfg.TrustRegion = weight, 0.5, lambda
		h, err := NewHeads(cfg.LearnerConfig, A)
		if err != nil {
			t.Fatal(err)
		}
		// One single-step sequence per (s, a): row (0, b) is the step, row (1, b) its bootstrap.
		B := S * A
		st := Steps{T: 1, B: B, Lengths: make([]int, B), Terminated: make([]bool, B), Actions: make([]int32, B), Rewards: make([]float64, B)}
		heads, lagged := make([]*tensor.Matrix, len(h.Sizes)), make([]*tensor.Matrix, len(h.Sizes))
		for i, size := range h.Sizes {
			heads[i], lagged[i] = tensor.New(2*B, size), tensor.New(2*B, size)
		}
		for b := range B {
			s, a := b/A, b%A
			st.Lengths[b], st.Actions[b] = 1, int32(a)
			var sq float64
			for c := range A {
				q, pt := sol.Q[s*A+c], tr.Lagged[s*A+c]
				sq += sol.Policy[s*A+c] * sol.Policy[s*A+c]
				if sparse {
					// The optimum is sparsemax((Q + λπ̃)/(α + λ)), and sparsemax(π̃) = π̃.
					heads[0].Data[b*A+c] = float32((q + lambda*pt) / (weight + lambda))
					lagged[0].Data[b*A+c] = float32(pt)
				} else {
					heads[0].Data[b*A+c] = float32((q + lambda*math.Log(pt)) / (weight + lambda))
					lagged[0].Data[b*A+c] = float32(math.Log(pt))
				}
			}
			if sparse {
				// exp(head) = α + λ and −((α+λ)/2)·sigmoid(head) = Λ(s) = −((α+λ)/2)·‖π‖².
				heads[h.LambdaHead].Data[b] = float32(math.Log(weight + lambda))
				heads[h.BigHead].Data[b] = float32(math.Log(sq / (1 - sq)))
			}
		}
		for _, reference := range []bool{true, false} {
			o := NewObjective(cfg.LearnerConfig, &h)
			o.Reference = reference
			o.trust.Lambda = lambda
			if err := o.trust.laggedShifts(&h, lagged, st, 0); err != nil {
				t.Fatal(err)
			}
			if _, err := o.Evaluate(heads, st, nil); err != nil {
				t.Fatal(err)
			}
			if h.Alpha != weight {
				t.Fatalf("%s: Evaluate left the heads' weight at %v, want %v", algo, h.Alpha, weight)
			}
			worst := 0.0
			for b := range B {
				worst = math.Max(worst, math.Abs(o.Term(b)-want(b/A, b%A)))
			}
			if worst > 1e-4 {
				t.Errorf("%s (reference %v): step terms differ from the oracle's by up to %v", algo, reference, worst)
			}
		}
	}
}
