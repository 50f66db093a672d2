// Package policy is the row mathematics of soft, sparse and Tsallis
// (entmax) policies: distributions from logits, their Jacobian-vector
// products, value operators, sampling, and the per-step terms of the
// path-consistency errors with their gradients. Everything works on one row
// of logits at a time ([]float32 from the networks or []float64), is
// generic over Float, accumulates in float64, subtracts the row maximum
// before any arithmetic, and allocates nothing: outputs and scratch are the
// caller's. The Rows variants loop over a row-major batch.
//
// # Masks
//
// Every forward function takes valid []bool (nil: all actions valid). A
// masked action is excluded, never given -Inf arithmetic: the result equals
// the function applied to the subset of valid entries, with 0 probability
// written at masked positions. A -Inf logit counts as masked. A NaN or +Inf
// valid logit, or no valid entry, yields a NaN row (support 0).
//
// # Distributions
//
//	Softmax(dst, z, valid)                          softmax
//	LogSoftmax(dst, z, valid) lse                   log-probabilities (-Inf when masked)
//	LogSumExp(z, valid)                             soft value operator; gradient = Softmax
//	Sparsemax(dst, z, valid) (tau, support)         relu(z - G(z)); tau = G(z); dst must not alias z
//	SparsemaxWith(alg, dst, z, valid)               Sort, Pivot, Condat, Bisect or Auto
//	SparsemaxThreshold(alg, z, valid, scratch)      G(z) and support size only
//	Spmax(z, valid, scratch), SpmaxFromProbs(z, p, valid)
//	                                                sparse value operator; gradient = Sparsemax
//	Entmax(dst, z, valid, alpha) (tau, support)     alpha-entmax, alpha >= 1 (1: softmax, 2: sparsemax)
//	EntmaxBisect(dst, z, valid, alpha)              root finding, any alpha > 1
//	EntmaxConjugate(z, valid, alpha, scratch), EntmaxConjugateFromProbs(z, p, valid, alpha)
//	                                                Omega*_alpha(z) = max_p <p,z> + H_alpha(p); gradient = Entmax
//	TsallisEntropy(p, alpha)                        H_alpha(p) = (1 - sum p^alpha)/(alpha(alpha-1))
//	SoftmaxJVP, SparsemaxJVP, EntmaxJVP(dst, p, v[, alpha])
//	                                                J v at the probabilities p (J symmetric: also the VJP)
//	Sample(p, rng), SampleWithUniform(p, u), Greedy(z, valid)
//
// The value of a state in the unified (single Q head) forms is
// temp*Op(Q/temp) with Op = LogSumExp, Spmax or EntmaxConjugate; its
// gradient with respect to Q is the policy.
//
// # Consistency steps
//
// With c the non-reward part of a step, the d-step error is
// C = -V(x_t) + gamma^d V(x_{t+d}) + sum_j gamma^j (r_{t+j} + c_{t+j}).
// Each step function returns c (and its parts) and adds w * dc/dz to dz,
// where w is the weight the learner gives the step (sum of C * gamma^j over
// the paths that contain it):
//
//	SoftStep(dz, logp, a, temp, w) c                     c = -temp log pi(a|x)
//	SparseStep(dz, SparseRow{Z, P, Tau}, a, alpha, headLambda, headBigLambda, w) SparseStepResult
//	    c = alpha/2 - alpha mu(a|x) + lambda(a|x) - Lambda(x), mu = relu(z - G(z)),
//	    lambda = relu(G(z) - z_a) exp(headLambda), Lambda = -(alpha/2) sigmoid(headBigLambda);
//	    also returns dc/dheadLambda and dc/dheadBigLambda.
//	TsallisStep(dz, SparseRow{Z, P, Tau}, a, alpha, temp, logScale, w) TsallisStepResult
//	    c = -temp phi_alpha(a|x) + relu(tau - (alpha-1) z_a)/(alpha-1) exp(logScale)
//
// Where alpha enters (paper eq. sparse-opt and appendix): the optimal policy
// is relu(Q/alpha - G(Q/alpha)) and the network policy relu(NN - G(NN)), so
// the logits z stand for Q/alpha and alpha appears in the step only as
// alpha/2 and -alpha*mu. At the optimum exp(headLambda) = alpha and
// Lambda = -(alpha/2) sum mu^2; TsallisStep at alpha = 2 with
// logScale = log(temp) is exactly that optimum form, with the state
// multiplier computed from the policy instead of a head.
//
// # Speed (forward + JVP per float32 row, N(0,1) logits, 2-core dev VM)
//
// go test -run XXX -bench 'SparsemaxSideBySide' -benchtime 150ms ./agent/policy/
// measured, in one run, ns/row sort / pivot / Condat:
//
//	K = 20:     660 / 396 / 316      (Condat/sort 0.48)
//	K = 160:    11300 / 4647 / 3921  (0.35)
//	K = 729:    116927 / 23547 / 31187 (0.27; pivot 0.20)
//	K = 15625:  3.29e6 / 670160 / 76613 (0.023)
//
// The machine is shared, so single figures move by 2x between runs; the
// ratios are stable: Condat beats sorting from K = 4-8 on, and pivot at
// all but a few sizes. Auto first keeps only the candidates, the usable
// actions above max z - 1 (the threshold lies in [max z - 1, max z]),
// found in the same pass that finds the maximum; it then sorts below
// AutoSelectionMinK = 8 candidates (where the two are within noise) and uses
// Condat above. At K = 15,625 with a peaked row this costs 1.2-1.8x a bare
// max reduction over the row (BenchmarkSparsemaxVsMax, same run); a flat
// row, where every action is a candidate, costs what full Condat does.
// For alpha = 1.5, Entmax uses the exact sort below Entmax15SortMaxK = 64
// and bisection + Newton above.
package policy
