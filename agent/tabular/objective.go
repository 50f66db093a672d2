package tabular

import (
	"fmt"
	"math"

	"github.com/sparsepcl/sparsepcl/agent/policy"
)

// Objective is the per-step regulariser of the MDP objective
// E sum_t gamma^t (r_t + Temp * H_Alpha(pi(.|x_t))), with H_alpha the
// Tsallis entropy (1 - sum p^alpha)/(alpha(alpha-1)) (Shannon at alpha = 1,
// the paper's sparse (1 - |p|^2)/2 at alpha = 2). Temp = 0 is the
// unregularised (hard max) problem.
type Objective struct {
	Alpha float64
	Temp  float64
}

// Hard is the unregularised objective.
func Hard() Objective { return Objective{Alpha: 1} }

// Soft is the Shannon-regularised objective (soft MDP) with temperature temp.
func Soft(temp float64) Objective { return Objective{Alpha: 1, Temp: temp} }

// Sparse is the sparse Tsallis objective of the paper with regularisation
// alpha (the paper's alpha is our Temp).
func Sparse(alpha float64) Objective { return Objective{Alpha: 2, Temp: alpha} }

// Tsallis is the general alpha-Tsallis objective.
func Tsallis(alpha, temp float64) Objective { return Objective{Alpha: alpha, Temp: temp} }

func (o Objective) String() string {
	switch {
	case o.Temp == 0:
		return "hard"
	case o.Alpha == 1:
		return fmt.Sprintf("soft(temp=%g)", o.Temp)
	case o.Alpha == 2:
		return fmt.Sprintf("sparse(alpha=%g)", o.Temp)
	}
	return fmt.Sprintf("tsallis(alpha=%g, temp=%g)", o.Alpha, o.Temp)
}

// Validate checks alpha >= 1 and temp >= 0.
func (o Objective) Validate() error {
	if !(o.Alpha >= 1) || math.IsInf(o.Alpha, 0) {
		return fmt.Errorf("tabular: objective alpha = %v must be >= 1 and finite", o.Alpha)
	}
	if !(o.Temp >= 0) || math.IsInf(o.Temp, 0) {
		return fmt.Errorf("tabular: objective temperature = %v must be >= 0 and finite", o.Temp)
	}
	return nil
}

// MaxEntropy is the largest value of the regulariser over k actions:
// log k (soft), (k-1)/(2k) (sparse), (1 - k^(1-alpha))/(alpha(alpha-1)).
func (o Objective) MaxEntropy(k int) float64 {
	if o.Alpha == 1 {
		return math.Log(float64(k))
	}
	return (1 - math.Pow(float64(k), 1-o.Alpha)) / (o.Alpha * (o.Alpha - 1))
}

// Entropy is Temp * H_alpha(pi) (0 for the hard objective).
func (o Objective) Entropy(pi []float64) float64 {
	if o.Temp == 0 {
		return 0
	}
	return o.Temp * policy.TsallisEntropy(pi, o.Alpha)
}

// backup computes V = Temp * Omega*_alpha(q/Temp) for one state's action
// values q, writes the maximising policy into pi and returns V and the
// threshold tau of the policy (entmax coordinates of z = q/Temp; for the
// hard objective the index of the greedy action). z is scratch of len(q).
func (o Objective) backup(pi, q, z []float64) (v, tau float64) {
	if o.Temp == 0 {
		g := policy.Greedy(q, nil)
		for i := range pi {
			pi[i] = 0
		}
		pi[g] = 1
		return q[g], float64(g)
	}
	for i := range q {
		z[i] = q[i] / o.Temp
	}
	tau, _ = policy.Entmax(pi, z, nil, o.Alpha)
	return o.Temp * policy.EntmaxConjugateFromProbs(z, pi, nil, o.Alpha), tau
}
