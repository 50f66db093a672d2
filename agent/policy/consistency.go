package policy

import (
	"fmt"
	"math"
)

// The step functions below return the non-reward part c of one step of a
// path-consistency error and accumulate its gradient. With them the d-step
// error of a path x_t..x_{t+d} is
//
//	C = -V(x_t) + gamma^d V(x_{t+d}) + sum_{j<d} gamma^j (r_{t+j} + c_{t+j}),
//
// so a learner minimising C^2/2 calls each step once with weight
// w = sum over the paths containing the step of C * gamma^j.

// SoftStep is the soft-PCL step c = -temp * log pi(a|x) with
// pi = softmax(z) given as logp = LogSoftmax(z). It adds
// w * dc/dz = -w * temp * (onehot(a) - pi) to dz and returns c.
func SoftStep[T Float](dz, logp []T, a int, temp, w float64) float64 {
	checkRow("SoftStep", len(logp), len(dz), nil)
	checkAction("SoftStep", a, len(logp))
	for b := range logp {
		pb := math.Exp(float64(logp[b]))
		g := pb
		if b == a {
			g = pb - 1
		}
		dz[b] += T(w * temp * g)
	}
	return -temp * float64(logp[a])
}

// SparseRow is one row's sparsemax forward pass, the input of SparseStep
// and TsallisStep: the logits Z, the probabilities P and the threshold
// Tau that Sparsemax (or Entmax) returned for them.
type SparseRow[T Float] struct {
	Z, P []T
	Tau  float64
}

// SparseStepResult is the value of a sparse-PCL step and its derivatives
// with respect to the two multiplier heads (not scaled by the weight).
type SparseStepResult struct {
	Value       float64 // c = alpha/2 - alpha*mu(a|x) + lambda(a|x) - Lambda(x)
	Mu          float64 // mu(a|x) = relu(z_a - G(z))
	Lambda      float64 // lambda(a|x) = relu(G(z) - z_a) * exp(headLambda) >= 0
	BigLambda   float64 // Lambda(x) = -(alpha/2) * sigmoid(headBigLambda), in [-alpha/2, 0]
	DHeadLambda float64 // dc/d headLambda = lambda(a|x)
	DHeadBig    float64 // dc/d headBigLambda = (alpha/2) sigmoid (1 - sigmoid)
}

// SparseStep is the sparse-PCL step of Nachum, Chow and Ghavamzadeh (2018),
// eq. (consistency_1) with the multiplier parameterisation of their
// section 6 and appendix:
//
//	c = alpha/2 - alpha*mu(a|x) + lambda(a|x) - Lambda(x)
//	mu = relu(z - G(z)),  lambda = relu(G(z) - z_a) exp(headLambda),
//	Lambda = -(alpha/2) sigmoid(headBigLambda).
//
// The logits z play the role of Q/alpha: the paper's optimal policy is
// relu(Q/alpha - G(Q/alpha)), its network policy is relu(NN - G(NN)), so
// alpha enters the step only through the -alpha*mu and alpha/2 terms, and at
// the optimum exp(headLambda) = alpha and Lambda = -(alpha/2) sum mu^2. In
// the unified form z = Q/alpha and the caller chains dz by 1/alpha.
//
// It adds w * dc/dz to dz. G depends on z through the support S
// (dG/dz_b = 1[b in S]/|S|), so
//
//	dc/dz_b = -alpha [a in S] (delta_ab - 1[b in S]/|S|)
//	          + [G > z_a] exp(headLambda) (1[b in S]/|S| - delta_ab).
//
// sparseTerms is the value of the sparse consistency's per-step term for the taken action's logit
// za and the threshold tau, with the head gradients, and exp(headLambda): what SparseStep and
// SparseStepOnSupport share before their gradients with respect to the logits.
func sparseTerms(za, tau, alpha, headLambda, headBigLambda float64) (r SparseStepResult, scale float64) {
	r.Mu = math.Max(za-tau, 0)
	scale = math.Exp(headLambda)
	if gap := tau - za; gap > 0 {
		r.Lambda = gap * scale
	}
	sig := sigmoid(headBigLambda)
	r.BigLambda = -alpha / 2 * sig
	r.Value = alpha/2 - alpha*r.Mu + r.Lambda - r.BigLambda
	r.DHeadLambda = r.Lambda
	r.DHeadBig = alpha / 2 * sig * (1 - sig)
	return r, scale
}

func SparseStep[T Float](dz []T, row SparseRow[T], a int, alpha, headLambda, headBigLambda, w float64) SparseStepResult {
	checkRow("SparseStep", len(row.Z), len(row.P), nil)
	checkRow("SparseStep", len(row.Z), len(dz), nil)
	checkAction("SparseStep", a, len(row.Z))
	k := 0
	for _, p := range row.P {
		if p > 0 {
			k++
		}
	}
	za := float64(row.Z[a])
	r, scale := sparseTerms(za, row.Tau, alpha, headLambda, headBigLambda)
	if k == 0 || w == 0 {
		return r
	}
	// Coefficient of 1[b in S]/|S| and of delta_ab.
	var cs, ca float64
	if row.P[a] > 0 {
		cs += alpha
		ca -= alpha
	}
	if row.Tau > za {
		cs += scale
		ca -= scale
	}
	shared := w * cs / float64(k)
	for b, p := range row.P {
		if p > 0 {
			dz[b] += T(shared)
		}
	}
	dz[a] += T(w * ca)
	return r
}

// TsallisStepResult is the value of a Tsallis-PCL step and its parts.
type TsallisStepResult struct {
	Value      float64 // c = -temp*phi_alpha(a|x) + Lambda(x, a)
	Phi        float64 // phi_alpha(a|x), log pi(a|x) at alpha = 1
	Multiplier float64 // off-support multiplier relu(tau - (alpha-1) z_a)/(alpha-1) * exp(logScale)
	DLogScale  float64 // dc/d logScale = Multiplier
}

// TsallisStep is the general-alpha path-consistency step (sparse_math.md
// section 3.3) for pi = Entmax(z, alpha), row = {z, pi, tau}:
//
//	c = -temp * phi_alpha(a|x) + relu(tau - (alpha-1) z_a)/(alpha-1) * exp(logScale),
//	phi_alpha(a) = (pi_a^(alpha-1) - 1)/(alpha-1) + (1 - sum_b pi_b^alpha)/alpha.
//
// At alpha = 1, phi = log pi(a|x) and there is no multiplier (soft PCL);
// at alpha = 2 it is the sparse step with the exact state multiplier
// Lambda(x) = -(temp/2) sum mu^2 instead of a learned head. logScale is
// the log of the off-support multiplier scale: log(temp) gives the exact
// value that holds at the optimum (unified form), a learned head gives the
// paper's lambda. It adds w * dc/dz to dz, with the NaN-safe closed form
// dphi(a)/dz_b = [a in S](delta_ab - ghat_b) - (pi_b - ghat_b), ghat = g/sum g,
// g = pi^(2-alpha), and dtau/dz_b = (alpha-1) ghat_b.
func TsallisStep[T Float](dz []T, row SparseRow[T], a int, alpha, temp, logScale, w float64) TsallisStepResult {
	checkRow("TsallisStep", len(row.Z), len(row.P), nil)
	checkRow("TsallisStep", len(row.Z), len(dz), nil)
	checkAction("TsallisStep", a, len(row.Z))
	if !(alpha >= 1) {
		panic(fmt.Sprintf("policy.TsallisStep: alpha must be >= 1, got %v", alpha))
	}
	var sg, spa float64
	for _, p := range row.P {
		if p > 0 {
			pf := float64(p)
			sg += gAlpha(pf, alpha)
			if alpha != 1 {
				spa += powAlpha(pf, alpha)
			}
		}
	}
	pa := float64(row.P[a])
	var r TsallisStepResult
	onSupport := pa > 0
	var gap float64
	if alpha == 1 {
		r.Phi = math.Log(pa)
	} else {
		am1 := alpha - 1
		r.Phi = (math.Pow(pa, am1)-1)/am1 + (1-spa)/alpha
		if g := row.Tau - am1*float64(row.Z[a]); g > 0 && !onSupport {
			gap = g / am1
			r.Multiplier = gap * math.Exp(logScale)
		}
	}
	r.DLogScale = r.Multiplier
	r.Value = -temp*r.Phi + r.Multiplier
	if w == 0 || sg == 0 {
		return r
	}
	// dc/dz_b = -temp*dphi_b + scale*(ghat_b - delta_ab)*[gap > 0]
	//         = -temp*([a in S](delta_ab - ghat_b) - pi_b + ghat_b) + ...
	cGhat := -temp // coefficient of ghat_b from -temp*(ghat_b)
	cDelta := 0.0
	if onSupport {
		cGhat += temp
		cDelta -= temp
	}
	if gap > 0 {
		s := math.Exp(logScale)
		cGhat += s
		cDelta -= s
	}
	for b, p := range row.P {
		if p > 0 {
			pf := float64(p)
			ghat := gAlpha(pf, alpha) / sg
			dz[b] += T(w * (cGhat*ghat + temp*pf))
		}
	}
	dz[a] += T(w * cDelta)
	return r
}

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

func checkAction(fn string, a, k int) {
	if a < 0 || a >= k {
		panic(fmt.Sprintf("policy.%s: action %d out of range [0, %d)", fn, a, k))
	}
}
