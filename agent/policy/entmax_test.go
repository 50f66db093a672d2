package policy

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// The alpha table of sparse_math.md 1.5 for z = [0.5, 0.2, -0.1, -1.0].
func TestEntmaxReferenceTable(t *testing.T) {
	z := []float64{0.5, 0.2, -0.1, -1.0}
	cases := []struct {
		alpha float64
		p     []float64
		conj  float64
	}{
		{1, []float64{0.3979687647, 0.2948225122, 0.2184098889, 0.0887988342}, 1.4213817574},
		{1.5, []float64{0.5100964421, 0.3183333333, 0.1715702245, 0}, 0.8149054715},
		{2, []float64{0.6333333333, 0.3333333333, 0.0333333333, 0}, 0.6233333333},
		{3, []float64{0.8, 0.2, 0, 0}, 0.52},
	}
	for _, c := range cases {
		fns := map[string]func([]float64){
			"Entmax": func(p []float64) { Entmax(p, z, nil, c.alpha) },
		}
		if c.alpha > 1 {
			fns["EntmaxBisect"] = func(p []float64) { EntmaxBisect(p, z, nil, c.alpha) }
		}
		for name, f := range fns {
			p := make([]float64, 4)
			f(p)
			assertClose(t, fmt.Sprint(name, " alpha=", c.alpha), p, c.p, 1e-9)
		}
		if v := EntmaxConjugate(z, nil, c.alpha, make([]float64, 4)); math.Abs(v-c.conj) > 1e-9 {
			t.Fatalf("alpha=%v: conjugate %.10f, want %.10f", c.alpha, v, c.conj)
		}
	}
	got := make([]float64, 4)
	p := make([]float64, 4)
	Entmax(p, z, nil, 1.5)
	EntmaxJVP(got, p, []float64{1, 2, 3, 4}, 1.5)
	assertClose(t, "1.5 JVP", got, []float64{-0.5876245341, 0.1, 0.4876245341, 0}, 1e-9)
}

// Exact 1.5 sort algorithm equals bisection; entmax(2) equals sparsemax.
func TestEntmaxSortEqualsBisection(t *testing.T) {
	rng := newRNG(11)
	for r := 0; r < 1500; r++ {
		k := 1 + rng.IntN(12)
		if r%100 == 0 {
			k = 500
		}
		scale := []float64{0.1, 1, 10}[r%3]
		z := randomLogits(rng, k, scale)
		a, b := make([]float64, k), make([]float64, k)
		ta, ka := Entmax(a, z, nil, 1.5)
		tb, kb := EntmaxBisect(b, z, nil, 1.5)
		if ka != kb || math.Abs(ta-tb) > 1e-12 {
			t.Fatalf("1.5: sort tau,k %.16g,%d vs bisect %.16g,%d", ta, ka, tb, kb)
		}
		assertClose(t, "1.5 sort vs bisect", a, b, 1e-12)
		assertSimplex(t, "1.5", a, 1e-12)
	}
}

func TestEntmaxJVPFiniteDifferences(t *testing.T) {
	rng := newRNG(12)
	for _, alpha := range []float64{1, 1.25, 1.5, 1.75, 2, 3} {
		checked := 0
		for r := 0; r < 400 && checked < 40; r++ {
			k := 1 + rng.IntN(10)
			z := randomLogits(rng, k, 1)
			p := make([]float64, k)
			tau, _ := Entmax(p, z, nil, alpha)
			if alpha > 1 && !awayFromKinks(z, alpha, tau, 1e-4) {
				continue
			}
			checked++
			v := randomLogits(rng, k, 1)
			got := make([]float64, k)
			EntmaxJVP(got, p, v, alpha)
			h := 1e-6
			zp, zm := slices.Clone(z), slices.Clone(z)
			for i := range z {
				zp[i] += h * v[i]
				zm[i] -= h * v[i]
			}
			pp, pm := make([]float64, k), make([]float64, k)
			Entmax(pp, zp, nil, alpha)
			Entmax(pm, zm, nil, alpha)
			want := make([]float64, k)
			for i := range want {
				want[i] = (pp[i] - pm[i]) / (2 * h)
			}
			assertClose(t, fmt.Sprint("entmax JVP alpha=", alpha), got, want, 1e-7)
			if alpha == 1 {
				s := make([]float64, k)
				SoftmaxJVP(s, p, v)
				assertClose(t, "softmax JVP", s, got, 1e-15)
			}
			// grad of the conjugate is entmax.
			g := centralDiff(func(x []float64) float64 { return EntmaxConjugate(x, nil, alpha, make([]float64, k)) }, z, 1e-6)
			assertClose(t, fmt.Sprint("grad conjugate alpha=", alpha), g, p, 1e-7)
		}
		if checked < 40 {
			t.Fatalf("alpha=%v: only %d points", alpha, checked)
		}
	}
}

// Peaked input x1000 with alpha = 3 (deep-spin/entmax PR #32) stays finite;
// alpha -> 1 approaches softmax.
func TestEntmaxEdgeCases(t *testing.T) {
	rng := newRNG(13)
	for r := 0; r < 50; r++ {
		z := randomLogits(rng, 2+rng.IntN(20), 1000)
		for _, alpha := range []float64{1.2, 1.5, 3, 5} {
			p := make([]float64, len(z))
			_, k := Entmax(p, z, nil, alpha)
			if k < 1 {
				t.Fatalf("alpha=%v: support %d", alpha, k)
			}
			assertSimplex(t, fmt.Sprint("peaked alpha=", alpha), p, 1e-9)
		}
	}
	z := randomLogits(rng, 8, 1)
	soft := make([]float64, 8)
	Softmax(soft, z, nil)
	prev := math.Inf(1)
	for _, alpha := range []float64{1.1, 1.01, 1.001} {
		p := make([]float64, 8)
		Entmax(p, z, nil, alpha)
		assertSimplex(t, "near 1", p, 1e-9)
		d := maxAbsDiff(p, soft)
		if d >= prev {
			t.Fatalf("alpha=%v: distance to softmax %v did not shrink (previous %v)", alpha, d, prev)
		}
		prev = d
		c := EntmaxConjugate(z, nil, alpha, make([]float64, 8))
		if math.Abs(c-LogSumExp(z, nil)) > 20*(alpha-1) {
			t.Fatalf("alpha=%v: conjugate %v far from logsumexp %v", alpha, c, LogSumExp(z, nil))
		}
	}
	if prev > 2e-3 {
		t.Fatalf("entmax(1.001) is %v from softmax", prev)
	}
	// K = 1.
	for _, alpha := range []float64{1, 1.5, 2, 2.5} {
		p := []float64{0}
		_, k := Entmax(p, []float64{7}, nil, alpha)
		if p[0] != 1 || k != 1 {
			t.Fatalf("alpha=%v K=1: p=%v k=%d", alpha, p, k)
		}
	}
}

func TestTsallisEntropy(t *testing.T) {
	p := []float64{0.5, 0.3, 0.2, 0}
	if h, want := TsallisEntropy(p, 2), 0.5*(1-0.25-0.09-0.04); math.Abs(h-want) > 1e-15 {
		t.Fatalf("H_2 = %v, want %v", h, want)
	}
	sh := -(0.5*math.Log(0.5) + 0.3*math.Log(0.3) + 0.2*math.Log(0.2))
	if h := TsallisEntropy(p, 1); math.Abs(h-sh) > 1e-15 {
		t.Fatalf("H_1 = %v, want %v", h, sh)
	}
	if h := TsallisEntropy(p, 1.0001); math.Abs(h-sh) > 1e-3 {
		t.Fatalf("H_1.0001 = %v, want about %v", h, sh)
	}
	// Maximum at the uniform distribution: (1 - K^(1-alpha))/(alpha(alpha-1)).
	u := []float64{0.25, 0.25, 0.25, 0.25}
	if h, want := TsallisEntropy(u, 1.5), (1-math.Pow(4, -0.5))/(1.5*0.5); math.Abs(h-want) > 1e-15 {
		t.Fatalf("H_1.5(uniform) = %v, want %v", h, want)
	}
}
