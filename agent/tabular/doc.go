// Package tabular is an exact oracle for entropy-regularised finite MDPs:
// it solves small MDPs to machine precision so that the formulas of the
// policy package and the theorems of sparse PCL (Nachum, Chow and
// Ghavamzadeh 2018) can be checked against ground truth.
//
//   - MDPs: MDP (dense P and expected R, optional terminal states),
//     RandomMDP(seed, ...), Bandit(k, gamma) (sparse_math.md 2.3),
//     Gridworld(layout, slip, ...) and FrozenLake4Hole (sparse_math.md 3.5).
//   - Objectives: Hard(), Soft(temp), Sparse(alpha) (the paper's alpha is
//     the temperature of the (1-|p|^2)/2 entropy), Tsallis(alpha, temp)
//     with H_alpha = (1 - sum p^alpha)/(alpha(alpha-1)).
//   - ValueIteration: V* = Temp*Omega*_alpha(Q*/Temp) (max, logsumexp,
//     spmax, entmax conjugate) with Q*, the optimal policy and its
//     thresholds; Bellman applies the operator once.
//   - Evaluate: exact (linear solve) value of a stationary policy, with or
//     without the entropy bonus.
//   - Consistency: OneStepViolation and MultiStepViolation (every start
//     state, every action sequence of length d, exact expectations) of
//     V(s) = R + c(s,a) + gamma E V for a StepTerm c: SoftTerms
//     (-temp log pi), SparseTerms (the paper's alpha/2 - alpha mu + lambda -
//     Lambda with given multipliers), TsallisTerms (general alpha, computed
//     by policy.TsallisStep). OptimalSparseMultipliers builds the multipliers
//     of the proof of Theorem 1, BestSparseMultipliers the best fit for any
//     (V, mu), MultiplierViolation checks lambda >= 0, lambda mu = 0,
//     Lambda in [-alpha/2, 0], and ConsistentSparse builds consistent but
//     non-optimal solutions (Theorem 2) for a prescribed Lambda.
//
// All arrays are flat: per state [s], per state-action [s*Actions+a],
// transitions [(s*Actions+a)*States+s'].
package tabular
