// Package policytest holds the policies of the paper written the slow, obvious way in float64:
// softmax with its log-sum-exp, sparsemax by the sort definition with its threshold G and spmax,
// and α-entmax by bisection. Tests of the fast paths (the learners' losses, the row kernels)
// check against these definitions; nothing in the library calls them.
package policytest

import (
	"math"
	"sort"
)

// Softmax is softmax(z) and log Σ exp z, from the max-shifted exponentials.
func Softmax(z []float64) (p []float64, lse float64) {
	mx := math.Inf(-1)
	for _, x := range z {
		mx = max(mx, x)
	}
	sum := 0.0
	for _, x := range z {
		sum += math.Exp(x - mx)
	}
	lse = mx + math.Log(sum)
	p = make([]float64, len(z))
	for i, x := range z {
		p[i] = math.Exp(x - lse)
	}
	return p, lse
}

// Sparsemax is the Euclidean projection of z on the simplex, p = max(z − G, 0), with its
// threshold G(z): sort z descending and keep the largest k with 1 + k·z(k) > Σ_{j≤k} z(j).
func Sparsemax(z []float64) (p []float64, g float64) {
	s := append([]float64(nil), z...)
	sort.Sort(sort.Reverse(sort.Float64Slice(s)))
	cum, k, cumK := 0.0, 0, 0.0
	for j, v := range s {
		cum += v
		if 1+float64(j+1)*v > cum {
			k, cumK = j+1, cum
		}
	}
	g = (cumK - 1) / float64(k)
	p = make([]float64, len(z))
	for i, v := range z {
		p[i] = math.Max(v-g, 0)
	}
	return p, g
}

// Spmax is the sparse value operator, spmax(z) = ½ Σ_{i∈S} (z_i² − G(z)²) + ½, S the support.
func Spmax(z []float64) float64 {
	p, g := Sparsemax(z)
	sp := 0.5
	for i, x := range z {
		if p[i] > 0 {
			sp += 0.5 * (x*x - g*g)
		}
	}
	return sp
}

// Entmax is α-entmax with α = q: p_i = max((q−1)z_i − τ, 0)^(1/(q−1)), τ found by bisection on
// Σ p = 1 (the bracket [max − 1, max] of (q−1)z; the criterion f(τ_mid) ≥ 0 keeps it finite on
// peaked rows).
func Entmax(z []float64, q float64) []float64 {
	am1 := q - 1
	f := func(tau float64) float64 {
		s := 0.0
		for _, v := range z {
			s += math.Pow(math.Max(am1*v-tau, 0), 1/am1)
		}
		return s - 1
	}
	mx := math.Inf(-1)
	for _, v := range z {
		mx = max(mx, am1*v)
	}
	lo, hi := mx-1, mx
	for range 200 {
		mid := (lo + hi) / 2
		if f(mid) >= 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	p := make([]float64, len(z))
	for i, v := range z {
		p[i] = math.Pow(math.Max(am1*v-lo, 0), 1/am1)
	}
	return p
}
