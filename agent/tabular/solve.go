package tabular

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Solution is the optimum of an MDP under an objective.
type Solution struct {
	Objective  Objective
	V          []float64 // per state
	Q          []float64 // per (s, a): R + gamma P V
	Policy     []float64 // per (s, a): the optimal policy
	Tau        []float64 // per state: the policy threshold (entmax coordinates of Q/Temp)
	Iterations int
	Residual   float64 // sup |T V - V| at the end
}

// Bellman applies the regularised Bellman optimality operator once:
// dst(s) = Temp * Omega*_alpha(Q_v(s, .)/Temp) (max for the hard
// objective), 0 in terminal states.
func Bellman(dst []float64, m *MDP, obj Objective, v []float64) {
	A := m.Actions
	q := make([]float64, m.States*A)
	pi := make([]float64, A)
	z := make([]float64, A)
	m.ActionValues(q, v)
	for s := 0; s < m.States; s++ {
		if m.terminal(s) {
			dst[s] = 0
			continue
		}
		dst[s], _ = obj.backup(pi, q[s*A:(s+1)*A], z)
	}
}

// ValueIteration iterates the regularised Bellman operator from V = 0
// until sup |V_{k+1} - V_k| <= tol, and returns V*, Q*, the optimal policy
// (argmax / softmax / sparsemax / entmax of Q*/Temp) and its thresholds.
func ValueIteration(m *MDP, obj Objective, tol float64, maxIter int) (*Solution, error) {
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("value iteration: %w", err)
	}
	if err := obj.Validate(); err != nil {
		return nil, fmt.Errorf("value iteration: %w", err)
	}
	if !(tol > 0) {
		return nil, fmt.Errorf("value iteration: tolerance %v must be > 0", tol)
	}
	S, A := m.States, m.Actions
	v := make([]float64, S)
	next := make([]float64, S)
	var diff float64
	it := 0
	for it = 1; it <= maxIter; it++ {
		Bellman(next, m, obj, v)
		diff = 0
		for s := range v {
			diff = math.Max(diff, math.Abs(next[s]-v[s]))
		}
		v, next = next, v
		if diff <= tol {
			break
		}
	}
	if diff > tol {
		return nil, fmt.Errorf("value iteration (%v): no convergence in %d iterations (last change %g > %g)", obj, maxIter, diff, tol)
	}
	sol := &Solution{Objective: obj, V: v, Q: make([]float64, S*A), Policy: make([]float64, S*A),
		Tau: make([]float64, S), Iterations: it, Residual: diff}
	m.ActionValues(sol.Q, v)
	z := make([]float64, A)
	for s := 0; s < S; s++ {
		_, sol.Tau[s] = obj.backup(sol.Policy[s*A:(s+1)*A], sol.Q[s*A:(s+1)*A], z)
	}
	return sol, nil
}

// Evaluate returns the exact value of the stationary policy pi (per (s, a))
// under the objective: the solution of
// V = r_pi + Temp * H_alpha(pi(.|s)) + gamma P_pi V (V = 0 in terminal
// states), by a dense linear solve. Hard() evaluates the plain return.
func Evaluate(m *MDP, obj Objective, pi []float64) ([]float64, error) {
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("policy evaluation: %w", err)
	}
	if err := obj.Validate(); err != nil {
		return nil, fmt.Errorf("policy evaluation: %w", err)
	}
	S, A := m.States, m.Actions
	if len(pi) != S*A {
		return nil, fmt.Errorf("policy evaluation: policy has %d entries, want states*actions = %d", len(pi), S*A)
	}
	lhs := mat.NewDense(S, S, nil)
	rhs := mat.NewVecDense(S, nil)
	for s := 0; s < S; s++ {
		lhs.Set(s, s, 1)
		if m.terminal(s) {
			continue
		}
		row := pi[s*A : (s+1)*A]
		var sum float64
		for a, p := range row {
			if !(p >= 0) {
				return nil, fmt.Errorf("policy evaluation: pi(%d|%d) = %v < 0", a, s, p)
			}
			sum += p
		}
		if math.Abs(sum-1) > 1e-9 {
			return nil, fmt.Errorf("policy evaluation: pi(.|%d) sums to %v, want 1", s, sum)
		}
		b := obj.Entropy(row)
		for a, p := range row {
			if p == 0 {
				continue
			}
			b += p * m.R[s*A+a]
			for s2, t := range m.P[(s*A+a)*S : (s*A+a+1)*S] {
				if t != 0 {
					lhs.Set(s, s2, lhs.At(s, s2)-m.Gamma*p*t)
				}
			}
		}
		rhs.SetVec(s, b)
	}
	var x mat.VecDense
	if err := x.SolveVec(lhs, rhs); err != nil {
		return nil, fmt.Errorf("policy evaluation: linear solve: %w", err)
	}
	v := make([]float64, S)
	for s := range v {
		v[s] = x.AtVec(s)
	}
	return v, nil
}
