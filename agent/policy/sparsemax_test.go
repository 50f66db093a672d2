package policy

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

var inf = math.Inf(1)

// Section 1.5 of sparse_math.md, with the Keras/TF regression vectors.
func TestSparsemaxReferenceVectors(t *testing.T) {
	cases := []struct {
		z     []float64
		p     []float64
		tau   float64
		k     int
		spmax float64
	}{
		{[]float64{0, 0.5, 1}, []float64{0, 0.25, 0.75}, 0.25, 2, 1.0625},
		{[]float64{0.1, 0.2, 0.3, 0.4, 0.5}, []float64{0, 0.1, 0.2, 0.3, 0.4}, 0.1, 4, 0.75},
		{[]float64{0.175, 0, -2}, []float64{0.5875, 0.4125, 0}, -0.4125, 2, 0.345156250},
		{[]float64{0.3, 0.1, 1.2, 2.3}, []float64{0, 0, 0, 1}, 1.3, 1, 2.3},
		{[]float64{1, 1, 1, 1}, []float64{0.25, 0.25, 0.25, 0.25}, 0.75, 4, 1.375},
		{[]float64{2, 1, 0.1}, []float64{1, 0, 0}, 1.0, 1, 2.0},
		{[]float64{0, -inf, 0}, []float64{0.5, 0, 0.5}, -0.5, 2, 0.25},
		{[]float64{5}, []float64{1}, 4, 1, 5},
		{[]float64{0.5, 0.2, -0.1, -1.0}, []float64{0.6333333333333333, 0.3333333333333333, 0.0333333333333333, 0}, -0.1333333333333333, 3, 0.6233333333333333},
	}
	for _, c := range cases {
		for _, alg := range allAlgorithms {
			t.Run(fmt.Sprintf("%v/%s", c.z, alg), func(t *testing.T) {
				p := make([]float64, len(c.z))
				tau, k := SparsemaxWith(alg, p, c.z, nil)
				assertClose(t, "p", p, c.p, 1e-12)
				if math.Abs(tau-c.tau) > 1e-12 || k != c.k {
					t.Fatalf("tau, k = %v, %d; want %v, %d", tau, k, c.tau, c.k)
				}
				assertSimplex(t, "p", p, 1e-12)
				scratch := make([]float64, len(c.z))
				if v := Spmax(c.z, nil, scratch); math.Abs(v-c.spmax) > 1e-9 {
					t.Fatalf("spmax = %.12g, want %.12g", v, c.spmax)
				}
				if v := SpmaxFromProbs(c.z, p, nil); math.Abs(v-c.spmax) > 1e-9 {
					t.Fatalf("SpmaxFromProbs = %.12g, want %.12g", v, c.spmax)
				}
			})
		}
	}
}

// Sort, pivot, Condat, bisection and entmax(alpha=2) agree on random
// vectors of many sizes and scales, and on vectors full of ties.
func TestSparsemaxAlgorithmsAgree(t *testing.T) {
	rng := newRNG(1)
	sizes := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 50, 729, 3000}
	count := 0
	for _, k := range sizes {
		for _, scale := range []float64{0.1, 1, 10} {
			reps := 60
			if k > 100 {
				reps = 4
			}
			for r := 0; r < reps; r++ {
				z := randomLogits(rng, k, scale)
				if r%3 == 2 { // integer logits: many ties
					for i := range z {
						z[i] = math.Round(z[i])
					}
				}
				count++
				p0, tau0, k0 := sparsemaxF64(z)
				for _, alg := range allAlgorithms {
					p := make([]float64, k)
					tau, kk := SparsemaxWith(alg, p, z, nil)
					if kk != k0 || math.Abs(tau-tau0) > 1e-12 {
						t.Fatalf("K=%d scale=%g %s: tau,k = %.15g,%d; sort gives %.15g,%d", k, scale, alg, tau, kk, tau0, k0)
					}
					assertClose(t, alg.String(), p, p0, 1e-12)
				}
				pe := make([]float64, k)
				tauE, kE := EntmaxBisect(pe, z, nil, 2)
				if kE != k0 || math.Abs(tauE-tau0) > 1e-12 {
					t.Fatalf("K=%d: entmax(2) bisect tau,k = %.15g,%d; sort %.15g,%d", k, tauE, kE, tau0, k0)
				}
				assertClose(t, "entmax alpha=2", pe, p0, 1e-12)
			}
		}
	}
	if count < 2000 {
		t.Fatalf("only %d vectors checked", count)
	}
}

// Properties 1-4 and the two-dimensional closed form of the TF suite.
func TestSparsemaxProperties(t *testing.T) {
	rng := newRNG(2)
	for r := 0; r < 200; r++ {
		k := 2 + rng.IntN(10)
		z := make([]float64, k)
		for i := range z {
			z[i] = -3 + 6*rng.Float64()
		}
		p, _, _ := sparsemaxF64(z)
		// Prop 1a: zeros give the uniform distribution.
		u, _, _ := sparsemaxF64(make([]float64, k))
		for _, v := range u {
			if math.Abs(v-1/float64(k)) > 1e-15 {
				t.Fatalf("sparsemax(0) = %v", u)
			}
		}
		// Prop 1b: z/eps is one-hot at the arg max.
		s := slices.Clone(z)
		slices.Sort(s)
		eps := 0.99 * (s[k-1] - s[k-2])
		if eps > 0 {
			zz := slices.Clone(z)
			for i := range zz {
				zz[i] /= eps
			}
			q, _, kk := sparsemaxF64(zz)
			if kk != 1 || math.Abs(q[Greedy(z, nil)]-1) > 1e-12 {
				t.Fatalf("sparsemax(z/eps) = %v, not one-hot", q)
			}
		}
		// Prop 2: adding a constant changes nothing.
		c := 10 * rng.NormFloat64()
		zc := slices.Clone(z)
		for i := range zc {
			zc[i] += c
		}
		pc, _, _ := sparsemaxF64(zc)
		assertClose(t, "shift", pc, p, 1e-12)
		// Prop 3: permutation equivariance.
		perm := rng.Perm(k)
		zp := make([]float64, k)
		for i, j := range perm {
			zp[i] = z[j]
		}
		pp, _, _ := sparsemaxF64(zp)
		for i, j := range perm {
			if math.Abs(pp[i]-p[j]) > 1e-12 {
				t.Fatalf("permutation: %v vs %v", pp, p)
			}
		}
		// Prop 4: z_i <= z_j implies 0 <= p_j - p_i <= z_j - z_i.
		for i := range z {
			for j := range z {
				if z[i] <= z[j] {
					d := p[j] - p[i]
					if d < -1e-9 || d > z[j]-z[i]+1e-9 {
						t.Fatalf("prop 4 fails at %d,%d: z %v p %v", i, j, z, p)
					}
				}
			}
		}
	}
	for _, tt := range []float64{-3, -1.5, -1, -0.3, 0, 0.4, 1, 2.2} {
		p, _, _ := sparsemaxF64([]float64{tt, 0})
		want := (tt + 1) / 2
		if tt < -1 {
			want = 0
		} else if tt > 1 {
			want = 1
		}
		if math.Abs(p[0]-want) > 1e-15 {
			t.Fatalf("sparsemax([%g,0])_0 = %v, want %v", tt, p[0], want)
		}
	}
}

func TestSparsemaxNonFinite(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		z    []float64
		want []float64 // nil: NaN row
	}{
		{[]float64{0, -inf, 0}, []float64{0.5, 0, 0.5}},
		{[]float64{0, -inf, -inf}, []float64{1, 0, 0}},
		{[]float64{-inf, -inf}, nil},
		{[]float64{1, inf, 0}, nil},
		{[]float64{1, nan, 0}, nil},
	}
	for _, c := range cases {
		for _, alg := range allAlgorithms {
			p := make([]float64, len(c.z))
			tau, k := SparsemaxWith(alg, p, c.z, nil)
			if c.want == nil {
				if k != 0 || !math.IsNaN(tau) {
					t.Fatalf("%v %s: tau,k = %v,%d; want NaN,0", c.z, alg, tau, k)
				}
				for _, v := range p {
					if !math.IsNaN(v) {
						t.Fatalf("%v %s: p = %v, want NaN row", c.z, alg, p)
					}
				}
				continue
			}
			assertClose(t, fmt.Sprint(c.z, alg), p, c.want, 0)
		}
	}
}

// A masked action is excluded, never -Inf arithmetic: the result equals
// the same operation on the subset of valid entries.
func TestMaskingEqualsSubsetting(t *testing.T) {
	rng := newRNG(3)
	type op struct {
		name string
		f    func(dst, z []float64, valid []bool)
	}
	ops := []op{{"softmax", func(d, z []float64, v []bool) { Softmax(d, z, v) }}}
	for _, alg := range allAlgorithms {
		ops = append(ops, op{"sparsemax/" + alg.String(), func(d, z []float64, v []bool) { SparsemaxWith(alg, d, z, v) }})
	}
	for _, a := range []float64{1.25, 1.5, 2, 3} {
		ops = append(ops, op{fmt.Sprint("entmax", a), func(d, z []float64, v []bool) { Entmax(d, z, v, a) }})
		ops = append(ops, op{fmt.Sprint("entmaxbisect", a), func(d, z []float64, v []bool) { EntmaxBisect(d, z, v, a) }})
	}
	for r := 0; r < 60; r++ {
		k := 2 + rng.IntN(30)
		z := randomLogits(rng, k, 2)
		valid := make([]bool, k)
		var sub []float64
		for i := range valid {
			valid[i] = rng.Float64() < 0.6 || i == 0
			if !valid[i] {
				z[i] = 100 // a masked entry's value must not matter
			} else {
				sub = append(sub, z[i])
			}
		}
		for _, o := range ops {
			full := make([]float64, k)
			o.f(full, z, valid)
			part := make([]float64, len(sub))
			o.f(part, sub, nil)
			j := 0
			for i := range z {
				if !valid[i] {
					if full[i] != 0 {
						t.Fatalf("%s: masked entry %d has p = %v", o.name, i, full[i])
					}
					continue
				}
				if math.Abs(full[i]-part[j]) > 1e-12 {
					t.Fatalf("%s: masked %v vs subset %v", o.name, full, part)
				}
				j++
			}
		}
		if a, b := LogSumExp(z, valid), LogSumExp(sub, nil); math.Abs(a-b) > 1e-12 {
			t.Fatalf("logsumexp masked %v vs subset %v", a, b)
		}
		scratch := make([]float64, k)
		if a, b := Spmax(z, valid, scratch), Spmax(sub, nil, scratch); math.Abs(a-b) > 1e-12 {
			t.Fatalf("spmax masked %v vs subset %v", a, b)
		}
		if g := Greedy(z, valid); !valid[g] {
			t.Fatalf("greedy picked masked action %d", g)
		}
	}
}

// Logits of 1e8 and more (tensorflow/addons#2314) give a valid simplex
// point in float32 and float64, for every algorithm.
func TestSparsemaxHugeLogits(t *testing.T) {
	rng := newRNG(4)
	vecs32 := [][]float32{{1.3676e8, 1.5959e8}, {1e8, 1e8, 1e8}, {3e38, -3e38, 1e38}}
	vecs64 := [][]float64{{1e7 + 0.25, 1e7}, {1.3676e8, 1.5959e8}, {1e300, 1e300, -1e300}}
	for r := 0; r < 20; r++ {
		z := randomLogits(rng, 3+rng.IntN(20), 1e8)
		vecs64 = append(vecs64, z)
		z32 := make([]float32, len(z))
		for i := range z {
			z32[i] = float32(z[i])
		}
		vecs32 = append(vecs32, z32)
	}
	for _, alg := range allAlgorithms {
		for _, z := range vecs64 {
			p := make([]float64, len(z))
			SparsemaxWith(alg, p, z, nil)
			assertSimplex(t, fmt.Sprint(alg, z), p, 1e-9)
		}
		for _, z := range vecs32 {
			p := make([]float32, len(z))
			SparsemaxWith(alg, p, z, nil)
			p64 := make([]float64, len(p))
			for i := range p {
				p64[i] = float64(p[i])
			}
			assertSimplex(t, fmt.Sprint(alg, z), p64, 1e-6)
		}
	}
	// [1e7+0.25, 1e7] must be [0.625, 0.375], not [1, 1].
	p := make([]float64, 2)
	Sparsemax(p, []float64{1e7 + 0.25, 1e7}, nil)
	assertClose(t, "1e7", p, []float64{0.625, 0.375}, 1e-9)
	for _, a := range []float64{1.5, 1.25, 3} {
		for _, z := range vecs64 {
			p := make([]float64, len(z))
			Entmax(p, z, nil, a)
			assertSimplex(t, fmt.Sprint("entmax", a, z), p, 1e-9)
		}
	}
	for _, z := range vecs64 {
		p := make([]float64, len(z))
		Softmax(p, z, nil)
		assertSimplex(t, fmt.Sprint("softmax", z), p, 1e-12)
	}
}

// float32 rows give the float64 answer to float32 precision.
func TestFloat32MatchesFloat64(t *testing.T) {
	rng := newRNG(5)
	for r := 0; r < 100; r++ {
		k := 1 + rng.IntN(200)
		z := randomLogits(rng, k, 3)
		z32 := make([]float32, k)
		for i := range z {
			z32[i] = float32(z[i])
			z[i] = float64(z32[i])
		}
		for _, alg := range allAlgorithms {
			p := make([]float64, k)
			p32 := make([]float32, k)
			tau, kk := SparsemaxWith(alg, p, z, nil)
			tau32, kk32 := SparsemaxWith(alg, p32, z32, nil)
			if kk != kk32 || math.Abs(tau-tau32) > 1e-12 {
				t.Fatalf("%s: float32 tau,k %v,%d vs float64 %v,%d", alg, tau32, kk32, tau, kk)
			}
			for i := range p {
				if math.Abs(float64(p32[i])-p[i]) > 1e-7 {
					t.Fatalf("%s: p32 %v vs p %v", alg, p32[i], p[i])
				}
			}
		}
	}
}

// Sparsemax backward: F3 against central differences away from kinks, the
// gorgonia backward vectors and the sparse_math 1.5 JVP vector.
func TestSparsemaxJVP(t *testing.T) {
	rng := newRNG(6)
	checked := 0
	for r := 0; r < 300 && checked < 100; r++ {
		k := 1 + rng.IntN(12)
		z := randomLogits(rng, k, 1)
		p, tau, _ := sparsemaxF64(z)
		if !awayFromKinks(z, 2, tau, 1e-4) {
			continue
		}
		checked++
		v := randomLogits(rng, k, 1)
		got := make([]float64, k)
		SparsemaxJVP(got, p, v)
		// J v by finite differences of z -> sparsemax(z) in the direction v.
		h := 1e-6
		zp, zm := slices.Clone(z), slices.Clone(z)
		for i := range z {
			zp[i] += h * v[i]
			zm[i] -= h * v[i]
		}
		pp, _, _ := sparsemaxF64(zp)
		pm, _, _ := sparsemaxF64(zm)
		want := make([]float64, k)
		for i := range want {
			want[i] = (pp[i] - pm[i]) / (2 * h)
		}
		assertClose(t, "sparsemax JVP vs finite differences", got, want, 1e-7)
	}
	if checked < 100 {
		t.Fatalf("only %d points away from kinks", checked)
	}
	got := make([]float64, 5)
	SparsemaxJVP(got, []float64{0, 0, 0.0521, 0.2354, 0.7124}, []float64{0.2860, -0.0702, 0.8080, 0.9913, 1.4683})
	assertClose(t, "gorgonia vector", got, []float64{0, 0, -0.2812, -0.0979, 0.3791}, 1e-4)
	p, _, _ := sparsemaxF64([]float64{0.5, 0.2, -0.1, -1.0})
	SparsemaxJVP(got[:4], p, []float64{1, 2, 3, 4})
	assertClose(t, "sparse_math 1.5 JVP", got[:4], []float64{-1, 0, 1, 0}, 1e-12)
	// K = 1: the Jacobian is zero.
	one := []float64{0}
	SparsemaxJVP(one, []float64{1}, []float64{3})
	if one[0] != 0 {
		t.Fatalf("K=1 JVP = %v, want 0", one[0])
	}
}

// spmax against brute force over a fine simplex grid (K = 3), the bounds
// and shift of F6, gradient = sparsemax, and stable = textbook form.
func TestSpmax(t *testing.T) {
	rng := newRNG(7)
	scratch := make([]float64, 64)
	for r := 0; r < 20; r++ {
		z := randomLogits(rng, 3, 1)
		best := math.Inf(-1)
		const n = 400
		for i := 0; i <= n; i++ {
			for j := 0; i+j <= n; j++ {
				p := []float64{float64(i) / n, float64(j) / n, float64(n-i-j) / n}
				v := p[0]*z[0] + p[1]*z[1] + p[2]*z[2] + 0.5*(1-p[0]*p[0]-p[1]*p[1]-p[2]*p[2])
				best = math.Max(best, v)
			}
		}
		got := Spmax(z, nil, scratch)
		if got < best-1e-12 || got > best+1e-4 {
			t.Fatalf("spmax(%v) = %v, grid max %v", z, got, best)
		}
	}
	for r := 0; r < 200; r++ {
		k := 1 + rng.IntN(40)
		z := randomLogits(rng, k, 3)
		v := Spmax(z, nil, scratch)
		m := slices.Max(z)
		if v < m-1e-12 || v > m+float64(k-1)/float64(2*k)+1e-12 {
			t.Fatalf("spmax %v outside [max, max+(K-1)/2K] = [%v, %v]", v, m, m+float64(k-1)/float64(2*k))
		}
		c := 5 * rng.NormFloat64()
		zc := slices.Clone(z)
		for i := range zc {
			zc[i] += c
		}
		if vc := Spmax(zc, nil, scratch); math.Abs(vc-(v+c)) > 1e-10 {
			t.Fatalf("spmax(z+c) = %v, want %v", vc, v+c)
		}
		p, tau, _ := sparsemaxF64(z)
		textbook := 0.5
		for i := range z {
			if p[i] > 0 {
				textbook += 0.5 * (z[i]*z[i] - tau*tau)
			}
		}
		if math.Abs(textbook-v) > 1e-9 {
			t.Fatalf("stable spmax %v vs 1/2 sum(z^2-tau^2)+1/2 = %v", v, textbook)
		}
		if awayFromKinks(z, 2, tau, 1e-4) {
			g := centralDiff(func(x []float64) float64 { return Spmax(x, nil, scratch) }, z, 1e-6)
			assertClose(t, "grad spmax = sparsemax", g, p, 1e-7)
		}
	}
}
