package tabular

import (
	"fmt"
	"math"

	"github.com/sparsepcl/sparsepcl/agent/policy"
)

// TrustRegion is a trust region of weight Lambda to a fixed lagged policy Lagged (per (s, a)):
// the per-state objective becomes ⟨π, Q⟩ + Temp·H(π) − Lambda·D(π, π̃(s)), with D the relative
// entropy KL(π‖π̃) for the soft objective (Trust-PCL's) and the Bregman divergence of the sparse
// Tsallis entropy, ½‖π − π̃‖², for the sparse one (docs/trust-region.md).
type TrustRegion struct {
	Lambda float64
	Lagged []float64
}

// Divergence is D(π, π̃) of one state under obj (soft: KL, sparse: ½‖π − π̃‖²).
func (tr TrustRegion) Divergence(obj Objective, pi, lagged []float64) float64 {
	d := 0.0
	for a, p := range pi {
		switch obj.Alpha {
		case 1:
			if p > 0 {
				d += p * math.Log(p/lagged[a])
			}
		default:
			d += (p - lagged[a]) * (p - lagged[a]) / 2
		}
	}
	return d
}

// StateObjective is ⟨π, q⟩ + Temp·H(π) − Lambda·D(π, π̃) at one state: the quantity whose maximum
// over the simplex is V(s).
func (tr TrustRegion) StateObjective(obj Objective, pi, q, lagged []float64) float64 {
	j := 0.0
	for a, p := range pi {
		j += p * q[a]
	}
	return j + obj.Temp*policy.TsallisEntropy(pi, obj.Alpha) - tr.Lambda*tr.Divergence(obj, pi, lagged)
}

// argmax writes the maximiser of StateObjective at one state into pi, in closed form: soft
// softmax((q + λ log π̃)/(τ + λ)), sparse sparsemax((q + λ π̃)/(α + λ)).
func (tr TrustRegion) argmax(obj Objective, pi, q, lagged, z []float64) {
	w := obj.Temp + tr.Lambda
	for a := range q {
		shift := tr.Lambda * lagged[a]
		if obj.Alpha == 1 {
			shift = tr.Lambda * math.Log(lagged[a])
		}
		z[a] = (q[a] + shift) / w
	}
	policy.Entmax(pi, z, nil, obj.Alpha)
}

// TrustValueIteration solves m under obj (soft or sparse, Temp > 0) with the trust region tr: it
// iterates V(s) = max_π StateObjective from V = 0 until sup |V_{k+1} − V_k| <= tol. V is the
// objective evaluated at the closed-form maximiser, not a conjugate formula.
func TrustValueIteration(m *MDP, obj Objective, tr TrustRegion, tol float64, maxIter int) (*Solution, error) {
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("trust value iteration: %w", err)
	}
	if (obj.Alpha != 1 && obj.Alpha != 2) || !(obj.Temp > 0) {
		return nil, fmt.Errorf("trust value iteration: %v: want soft or sparse with a positive weight", obj)
	}
	S, A := m.States, m.Actions
	if !(tr.Lambda > 0) || len(tr.Lagged) != S*A {
		return nil, fmt.Errorf("trust value iteration: weight %v and %d lagged probabilities, want > 0 and %d", tr.Lambda, len(tr.Lagged), S*A)
	}
	sol := &Solution{Objective: obj, V: make([]float64, S), Q: make([]float64, S*A), Policy: make([]float64, S*A), Tau: make([]float64, S)}
	next, z := make([]float64, S), make([]float64, A)
	for sol.Iterations = 1; sol.Iterations <= maxIter; sol.Iterations++ {
		m.ActionValues(sol.Q, sol.V)
		sol.Residual = 0
		for s := range S {
			if m.terminal(s) {
				next[s] = 0
				continue
			}
			q, pi, lagged := sol.Q[s*A:(s+1)*A], sol.Policy[s*A:(s+1)*A], tr.Lagged[s*A:(s+1)*A]
			tr.argmax(obj, pi, q, lagged, z)
			next[s] = tr.StateObjective(obj, pi, q, lagged)
			sol.Residual = math.Max(sol.Residual, math.Abs(next[s]-sol.V[s]))
		}
		copy(sol.V, next)
		if sol.Residual <= tol {
			m.ActionValues(sol.Q, sol.V)
			return sol, nil
		}
	}
	return sol, fmt.Errorf("trust value iteration: residual %v after %d iterations", sol.Residual, maxIter)
}

// TrustSoftTerms is the soft step with a trust region: −(τ + λ)·log π(a|s) + λ·log π̃(a|s).
func TrustSoftTerms(m *MDP, temp float64, tr TrustRegion, pi []float64) StepTerm {
	return func(s, a int) float64 {
		i := s*m.Actions + a
		return -(temp+tr.Lambda)*math.Log(pi[i]) + tr.Lambda*math.Log(tr.Lagged[i])
	}
}

// TrustSparseTerms is the sparse step with a trust region: the paper's step at the weight α + λ,
// (α+λ)/2 − (α+λ)·μ(a|s) + λ(a|s) − Λ(s), plus the shift λ·π̃(a|s) − (λ/2)(1 + ‖π̃(s)‖²), with
// multipliers at the weight α + λ (OptimalTrustSparseMultipliers).
func TrustSparseTerms(m *MDP, alpha float64, tr TrustRegion, mu []float64, mult SparseMultipliers) StepTerm {
	A := m.Actions
	w := alpha + tr.Lambda
	return func(s, a int) float64 {
		var sq float64
		for b := range A {
			sq += tr.Lagged[s*A+b] * tr.Lagged[s*A+b]
		}
		shift := tr.Lambda*tr.Lagged[s*A+a] - tr.Lambda/2*(1+sq)
		return w/2 - w*mu[s*A+a] + mult.Small[s*A+a] - mult.Big[s] + shift
	}
}

// OptimalTrustSparseMultipliers are the multipliers of the sparse consistency at the weight
// α + λ for the optimum sol of TrustValueIteration: λ(a|s) = (α+λ)·relu(G(z) − z_a) and
// Λ(s) = −((α+λ)/2)·‖π(s)‖², with z = (Q + λπ̃)/(α + λ).
func OptimalTrustSparseMultipliers(m *MDP, sol *Solution, tr TrustRegion) SparseMultipliers {
	S, A := m.States, m.Actions
	w := sol.Objective.Temp + tr.Lambda
	mult := SparseMultipliers{Small: make([]float64, S*A), Big: make([]float64, S)}
	z, p := make([]float64, A), make([]float64, A)
	for s := range S {
		if m.terminal(s) {
			continue
		}
		for a := range A {
			z[a] = (sol.Q[s*A+a] + tr.Lambda*tr.Lagged[s*A+a]) / w
		}
		g, _ := policy.Sparsemax(p, z, nil)
		var sq float64
		for a := range A {
			mu := sol.Policy[s*A+a]
			sq += mu * mu
			mult.Small[s*A+a] = w * math.Max(g-z[a], 0)
		}
		mult.Big[s] = -w / 2 * sq
	}
	return mult
}
