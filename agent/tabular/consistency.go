package tabular

import (
	"fmt"
	"math"

	"github.com/sparsepcl/sparsepcl/agent/policy"
)

// StepTerm is the non-reward part c(s, a) of a one-step consistency
// equation V(s) = R(s,a) + c(s,a) + gamma E V(s'), the same quantity the
// policy package's step functions return.
type StepTerm func(s, a int) float64

// SoftTerms is c = -temp * log pi(a|s) (the soft consistency of PCL).
func SoftTerms(m *MDP, temp float64, pi []float64) StepTerm {
	A := m.Actions
	return func(s, a int) float64 { return -temp * math.Log(pi[s*A+a]) }
}

// SparseMultipliers are the Lagrange multipliers of the paper's sparse
// consistency equation: Small[s*A+a] = lambda(a|s) >= 0 with
// lambda * mu = 0, and Big[s] = Lambda(s) in [-alpha/2, 0].
type SparseMultipliers struct {
	Small []float64
	Big   []float64
}

// SparseTerms is the paper's step c = alpha/2 - alpha mu(a|s) + lambda(a|s) - Lambda(s).
func SparseTerms(m *MDP, alpha float64, mu []float64, mult SparseMultipliers) StepTerm {
	A := m.Actions
	return func(s, a int) float64 {
		return alpha/2 - alpha*mu[s*A+a] + mult.Small[s*A+a] - mult.Big[s]
	}
}

// MultiplierViolation returns how far the multipliers are from the
// paper's constraints: lambda >= 0, lambda * mu = 0, -alpha/2 <= Lambda <= 0
// (terminal states are skipped).
func MultiplierViolation(m *MDP, alpha float64, mu []float64, mult SparseMultipliers) float64 {
	A := m.Actions
	var worst float64
	for s := 0; s < m.States; s++ {
		if m.terminal(s) {
			continue
		}
		b := mult.Big[s]
		worst = math.Max(worst, math.Max(b, 0))
		worst = math.Max(worst, math.Max(-alpha/2-b, 0))
		for a := 0; a < A; a++ {
			l := mult.Small[s*A+a]
			worst = math.Max(worst, math.Max(-l, 0))
			worst = math.Max(worst, math.Abs(l*mu[s*A+a]))
		}
	}
	return worst
}

// OptimalSparseMultipliers are the multipliers that the proof of Theorem 1
// constructs at a sparse solution (Objective alpha = 2, Temp = alpha):
// lambda(a|s) = alpha relu(G(z) - z_a) and Lambda(s) = -(alpha/2) sum mu^2,
// with z = Q(s, .)/alpha.
func OptimalSparseMultipliers(m *MDP, sol *Solution) (SparseMultipliers, error) {
	if sol.Objective.Alpha != 2 || sol.Objective.Temp <= 0 {
		return SparseMultipliers{}, fmt.Errorf("sparse multipliers need a sparse solution, got %v", sol.Objective)
	}
	alpha, A := sol.Objective.Temp, m.Actions
	mult := SparseMultipliers{Small: make([]float64, m.States*A), Big: make([]float64, m.States)}
	for s := 0; s < m.States; s++ {
		if m.terminal(s) {
			continue
		}
		var s2 float64
		for a := 0; a < A; a++ {
			mu := sol.Policy[s*A+a]
			s2 += mu * mu
			mult.Small[s*A+a] = alpha * math.Max(sol.Tau[s]-sol.Q[s*A+a]/alpha, 0)
		}
		mult.Big[s] = -alpha / 2 * s2
	}
	return mult, nil
}

// BestSparseMultipliers returns, for a given (V, mu), the multipliers that
// make the one-step sparse consistency error smallest state by state: with
// e(s,a) = Q_V(s,a) + alpha/2 - alpha mu(a|s) - V(s), Lambda(s) is the
// midpoint of e over the support of mu(.|s) clipped to [-alpha/2, 0], and
// lambda(a|s) = relu(Lambda(s) - e(s,a)) off the support. With them
// OneStepViolation measures how far (V, mu) is from being consistent at all.
func BestSparseMultipliers(m *MDP, alpha float64, v, mu []float64) SparseMultipliers {
	S, A := m.States, m.Actions
	q := make([]float64, S*A)
	m.ActionValues(q, v)
	mult := SparseMultipliers{Small: make([]float64, S*A), Big: make([]float64, S)}
	for s := 0; s < S; s++ {
		if m.terminal(s) {
			continue
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for a := 0; a < A; a++ {
			if mu[s*A+a] > 0 {
				e := q[s*A+a] + alpha/2 - alpha*mu[s*A+a] - v[s]
				lo, hi = math.Min(lo, e), math.Max(hi, e)
			}
		}
		big := math.Min(math.Max((lo+hi)/2, -alpha/2), 0)
		mult.Big[s] = big
		for a := 0; a < A; a++ {
			if mu[s*A+a] == 0 {
				e := q[s*A+a] + alpha/2 - v[s]
				mult.Small[s*A+a] = math.Max(big-e, 0)
			}
		}
	}
	return mult
}

// TsallisTerms is the general-alpha step of sparse_math.md 3.3 at a
// solution of the alpha-Tsallis objective, computed by policy.TsallisStep
// on z = Q(s, .)/Temp with the exact off-support multiplier (logScale =
// log Temp): c = -Temp phi_alpha(a|s) + Lambda(s, a).
func TsallisTerms(m *MDP, sol *Solution) StepTerm {
	A, temp, alpha := m.Actions, sol.Objective.Temp, sol.Objective.Alpha
	z := make([]float64, m.States*A)
	for i, q := range sol.Q {
		z[i] = q / temp
	}
	scratch := make([]float64, A)
	return func(s, a int) float64 {
		row := policy.SparseRow[float64]{Z: z[s*A : (s+1)*A], P: sol.Policy[s*A : (s+1)*A], Tau: sol.Tau[s]}
		return policy.TsallisStep(scratch, row, a, alpha, temp, math.Log(temp), 0).Value
	}
}

// OneStepViolation returns max over non-terminal s and all a of
// |R(s,a) + c(s,a) + gamma E V(s') - V(s)|.
func OneStepViolation(m *MDP, v []float64, c StepTerm) float64 {
	S, A := m.States, m.Actions
	q := make([]float64, S*A)
	m.ActionValues(q, v)
	var worst float64
	for s := 0; s < S; s++ {
		if m.terminal(s) {
			continue
		}
		for a := 0; a < A; a++ {
			worst = math.Max(worst, math.Abs(q[s*A+a]+c(s, a)-v[s]))
		}
	}
	return worst
}

// MaxSequences bounds the number of action sequences MultiStepViolation
// enumerates (Actions^d).
const MaxSequences = 1 << 20

// MultiStepViolation returns the largest violation of the d-step
// consistency equation
//
//	V(x_0) = E[gamma^d V(x_d) + sum_{t<d} gamma^t (R(x_t,a_t) + c(x_t,a_t)) | x_0, a_0..a_{d-1}]
//
// over every start state and every action sequence (the expectation is
// exact, by backward recursion). A path entering a terminal state stops
// there (value 0, no further terms).
func MultiStepViolation(m *MDP, v []float64, c StepTerm, d int) (float64, error) {
	S, A := m.States, m.Actions
	if d < 1 {
		return 0, fmt.Errorf("multi-step consistency: d = %d must be >= 1", d)
	}
	if math.Pow(float64(A), float64(d)) > MaxSequences {
		return 0, fmt.Errorf("multi-step consistency: %d^%d action sequences exceed %d", A, d, MaxSequences)
	}
	seq := make([]int, d)
	w := make([]float64, S)
	next := make([]float64, S)
	var worst float64
	for {
		// w_d = V; w_t(x) = R + c + gamma sum P w_{t+1}.
		copy(w, v)
		for t := d - 1; t >= 0; t-- {
			a := seq[t]
			for s := 0; s < S; s++ {
				if m.terminal(s) {
					next[s] = 0
					continue
				}
				var e float64
				for s2, p := range m.P[(s*A+a)*S : (s*A+a+1)*S] {
					if p != 0 {
						e += p * w[s2]
					}
				}
				next[s] = m.R[s*A+a] + c(s, a) + m.Gamma*e
			}
			w, next = next, w
		}
		for s := 0; s < S; s++ {
			if !m.terminal(s) {
				worst = math.Max(worst, math.Abs(w[s]-v[s]))
			}
		}
		i := 0
		for ; i < d; i++ {
			seq[i]++
			if seq[i] < A {
				break
			}
			seq[i] = 0
		}
		if i == d {
			return worst, nil
		}
	}
}

// ConsistentSparse solves the paper's one-step sparse consistency equation
// for a prescribed state multiplier Lambda(s) in [-alpha/2, 0]. Consistency
// with a fixed Lambda is the fixed point of the gamma-contraction
// V(s) = alpha G(Q_V(s, .)/alpha) + alpha/2 - Lambda(s), with
// mu = sparsemax(Q_V/alpha) and lambda(a|s) = alpha relu(G - Q_V(s,a)/alpha).
// Lambda = -(alpha/2) sum mu^2 gives the optimum; any other Lambda gives a
// consistent pair that Theorem 2 says is only alpha/(1-gamma)-optimal.
func ConsistentSparse(m *MDP, alpha float64, big []float64, tol float64, maxIter int) ([]float64, []float64, SparseMultipliers, error) {
	if err := m.Validate(); err != nil {
		return nil, nil, SparseMultipliers{}, fmt.Errorf("consistent sparse solution: %w", err)
	}
	S, A := m.States, m.Actions
	if len(big) != S {
		return nil, nil, SparseMultipliers{}, fmt.Errorf("consistent sparse solution: Lambda has %d entries, want %d", len(big), S)
	}
	for s, b := range big {
		if !(b >= -alpha/2 && b <= 0) {
			return nil, nil, SparseMultipliers{}, fmt.Errorf("consistent sparse solution: Lambda(%d) = %v outside [-alpha/2, 0]", s, b)
		}
	}
	v := make([]float64, S)
	q := make([]float64, S*A)
	z := make([]float64, A)
	scratch := make([]float64, A)
	for it := 0; ; it++ {
		if it == maxIter {
			return nil, nil, SparseMultipliers{}, fmt.Errorf("consistent sparse solution: no convergence in %d iterations", maxIter)
		}
		m.ActionValues(q, v)
		var diff float64
		for s := 0; s < S; s++ {
			nv := 0.0
			if !m.terminal(s) {
				for a := 0; a < A; a++ {
					z[a] = q[s*A+a] / alpha
				}
				g, _ := policy.SparsemaxThreshold(policy.Sort, z, nil, scratch)
				nv = alpha*g + alpha/2 - big[s]
			}
			diff = math.Max(diff, math.Abs(nv-v[s]))
			v[s] = nv
		}
		if diff <= tol {
			break
		}
	}
	m.ActionValues(q, v)
	mu := make([]float64, S*A)
	mult := SparseMultipliers{Small: make([]float64, S*A), Big: append([]float64(nil), big...)}
	for s := 0; s < S; s++ {
		if m.terminal(s) {
			mu[s*A] = 1 // any distribution: terminal states take no part
			continue
		}
		for a := 0; a < A; a++ {
			z[a] = q[s*A+a] / alpha
		}
		g, _ := policy.Sparsemax(mu[s*A:(s+1)*A], z, nil)
		for a := 0; a < A; a++ {
			mult.Small[s*A+a] = alpha * math.Max(g-z[a], 0)
		}
	}
	return v, mu, mult, nil
}
