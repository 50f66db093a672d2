package pcl

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randomInputs builds a random batch; every episode terminates when allTerminated.
func randomInputs(rng *rand.Rand, T, B int, allTerminated bool) PathInputs {
	in := PathInputs{T: T, B: B, Lengths: make([]int, B), Terminated: make([]bool, B),
		Values: make([]float64, (T+1)*B), Rewards: make([]float64, T*B), Terms: make([]float64, T*B)}
	for b := 0; b < B; b++ {
		in.Lengths[b] = 1 + rng.IntN(T)
		in.Terminated[b] = allTerminated || rng.IntN(2) == 0
	}
	in.Lengths[0] = T
	for i := range in.Values {
		in.Values[i] = rng.NormFloat64()
	}
	for i := range in.Rewards {
		in.Rewards[i] = rng.NormFloat64()
		in.Terms[i] = rng.NormFloat64()
	}
	return in
}

// referenceRecipeLoss follows objective.py literally: mask, prepend d-1 rows (rewards and terms 0,
// values gamma^{d-1}V0 .. gamma V0), discounted future sums over windows of d (zero past the end),
// shifted values gamma^d V[t+d], sum over rows, mean over episodes. Only for terminated episodes,
// where the reference's truncation bug does not matter.
func referenceRecipeLoss(in PathInputs, gamma float64, d int) float64 {
	total := 0.0
	for b := 0; b < in.B; b++ {
		L := in.Lengths[b]
		n := in.T + d - 1
		v := make([]float64, n+d) // zero beyond n: masked / final value 0 (terminated)
		x := make([]float64, n+d)
		for j := 0; j < d-1; j++ {
			v[j] = math.Pow(gamma, float64(d-1-j)) * in.Values[b]
		}
		for t := 0; t < in.T; t++ {
			if t < L {
				v[d-1+t] = in.Values[t*in.B+b]
				x[d-1+t] = in.Rewards[t*in.B+b] + in.Terms[t*in.B+b]
			}
		}
		for p := 0; p < n; p++ {
			c := -v[p] + math.Pow(gamma, float64(d))*v[p+d]
			for i := 0; i < d; i++ {
				c += math.Pow(gamma, float64(i)) * x[p+i]
			}
			total += 0.5 * c * c
		}
	}
	return total / float64(in.B)
}

// directLoss enumerates the rows from their definition, for any mix of end kinds.
func directLoss(in PathInputs, gamma float64, d int) float64 {
	total := 0.0
	for b := 0; b < in.B; b++ {
		L := in.Lengths[b]
		V := func(t int) float64 {
			if t == L && in.Terminated[b] {
				return 0
			}
			return in.Values[t*in.B+b]
		}
		path := func(s, k int) float64 {
			c := -V(s) + math.Pow(gamma, float64(k))*V(s+k)
			for i := 0; i < k; i++ {
				c += math.Pow(gamma, float64(i)) * (in.Rewards[(s+i)*in.B+b] + in.Terms[(s+i)*in.B+b])
			}
			return c
		}
		for k := 1; k <= d-1; k++ {
			c := math.Pow(gamma, float64(d-k)) * path(0, min(k, L))
			total += 0.5 * c * c
		}
		for s := 0; s < L; s++ {
			c := path(s, min(d, L-s))
			total += 0.5 * c * c
		}
	}
	return total / float64(in.B)
}

func TestPathLossHandExample(t *testing.T) {
	// One terminated step, d = 2, gamma = 0.5: leading row 0.5*(-1 + 2.5) = 0.75, real row 1.5.
	in := PathInputs{T: 1, B: 1, Lengths: []int{1}, Terminated: []bool{true},
		Values: []float64{1, 99}, Rewards: []float64{2}, Terms: []float64{0.5}}
	got, err := PathLoss(in, 0.5, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := 0.5 * (0.75*0.75 + 1.5*1.5); math.Abs(got-want) > 1e-12 {
		t.Fatalf("loss %v, want %v", got, want)
	}
	// Truncated: bootstraps from V(s_1) = 99 with gamma^1.
	in.Terminated[0] = false
	got, _ = PathLoss(in, 0.5, 2, nil)
	c1, c0 := -1+0.5*99+2.5, 0.5*(-1+0.5*99+2.5)
	if want := 0.5 * (c0*c0 + c1*c1); math.Abs(got-want) > 1e-9 {
		t.Fatalf("truncated loss %v, want %v", got, want)
	}
}

func TestPathLossMatchesSlowRecomputations(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		T, B, d int
		gamma   float64
	}{{1, 1, 1, 0.9}, {4, 3, 3, 0.9}, {7, 5, 10, 0.9}, {12, 6, 4, 1.0}, {20, 4, 10, 0.5}}
	for _, tc := range cases {
		in := randomInputs(rng, tc.T, tc.B, true)
		got, err := PathLoss(in, tc.gamma, tc.d, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := referenceRecipeLoss(in, tc.gamma, tc.d); math.Abs(got-want) > 1e-9*(1+want) {
			t.Errorf("%+v terminated: loss %v, reference recipe %v", tc, got, want)
		}
		in = randomInputs(rng, tc.T, tc.B, false)
		got, _ = PathLoss(in, tc.gamma, tc.d, nil)
		if want := directLoss(in, tc.gamma, tc.d); math.Abs(got-want) > 1e-9*(1+want) {
			t.Errorf("%+v mixed: loss %v, direct %v", tc, got, want)
		}
	}
}

func TestPathLossGradientFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	in := randomInputs(rng, 9, 4, false)
	var g PathGrads
	if _, err := PathLoss(in, 0.9, 4, &g); err != nil {
		t.Fatal(err)
	}
	const h = 1e-6
	check := func(name string, xs, grad []float64) {
		for i := range xs {
			old := xs[i]
			xs[i] = old + h
			lp, _ := PathLoss(in, 0.9, 4, nil)
			xs[i] = old - h
			lm, _ := PathLoss(in, 0.9, 4, nil)
			xs[i] = old
			fd := (lp - lm) / (2 * h)
			if math.Abs(fd-grad[i]) > 1e-6*(1+math.Abs(fd)) {
				t.Errorf("%s[%d]: analytic %v, finite difference %v", name, i, grad[i], fd)
			}
		}
	}
	check("values", in.Values, g.DValues)
	check("terms", in.Terms, g.DTerms)
}

func TestPathLossRejectsBadInput(t *testing.T) {
	good := randomInputs(rand.New(rand.NewPCG(5, 6)), 3, 2, true)
	cases := map[string]func(*PathInputs){
		"length 0":      func(in *PathInputs) { in.Lengths[1] = 0 },
		"length > T":    func(in *PathInputs) { in.Lengths[1] = 4 },
		"short values":  func(in *PathInputs) { in.Values = in.Values[:3] },
		"missing flags": func(in *PathInputs) { in.Terminated = nil },
	}
	for name, mut := range cases {
		in := good
		in.Lengths = append([]int(nil), good.Lengths...)
		mut(&in)
		if _, err := PathLoss(in, 0.9, 3, nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := PathLoss(good, 0.9, 0, nil); err == nil {
		t.Error("d = 0: no error")
	}
}
