package policy

import (
	"math"
	"testing"
)

func TestSoftmaxFamily(t *testing.T) {
	z := []float64{1, 2, 3}
	p := make([]float64, 3)
	Softmax(p, z, nil)
	e := []float64{math.Exp(1), math.Exp(2), math.Exp(3)}
	s := e[0] + e[1] + e[2]
	assertClose(t, "softmax", p, []float64{e[0] / s, e[1] / s, e[2] / s}, 1e-15)
	if v := LogSumExp(z, nil); math.Abs(v-math.Log(s)) > 1e-14 {
		t.Fatalf("logsumexp %v, want %v", v, math.Log(s))
	}
	lp := make([]float64, 3)
	LogSoftmax(lp, z, []bool{true, false, true})
	s2 := e[0] + e[2]
	if math.Abs(lp[0]-math.Log(e[0]/s2)) > 1e-14 || !math.IsInf(lp[1], -1) || math.Abs(lp[2]-math.Log(e[2]/s2)) > 1e-14 {
		t.Fatalf("masked log-softmax %v", lp)
	}
	// Huge logits and float32.
	z32 := []float32{1e6, 1e6 - 1, -1e8}
	p32 := make([]float32, 3)
	Softmax(p32, z32, nil)
	want := 1 / (1 + math.Exp(-1))
	if math.Abs(float64(p32[0])-want) > 1e-6 || p32[2] != 0 {
		t.Fatalf("float32 softmax of huge logits: %v", p32)
	}
	// In place is allowed for softmax.
	zz := []float64{1, 2, 3}
	Softmax(zz, zz, nil)
	assertClose(t, "in place", zz, p, 1e-15)
	// Gradient of logsumexp is softmax.
	g := centralDiff(func(x []float64) float64 { return LogSumExp(x, nil) }, z, 1e-6)
	assertClose(t, "grad logsumexp", g, p, 1e-9)
}

func TestSamplingAndGreedy(t *testing.T) {
	rng := newRNG(21)
	z := []float64{0.5, 0.2, -0.1, -1.0, 0.45}
	valid := []bool{true, true, true, true, false}
	for _, alpha := range []float64{1, 1.5, 2} {
		p := make([]float64, 5)
		Entmax(p, z, valid, alpha)
		const n = 200000
		counts := make([]float64, 5)
		for i := 0; i < n; i++ {
			counts[Sample(p, rng)]++
		}
		for i := range p {
			f := counts[i] / n
			// 5 standard deviations of a binomial proportion.
			if sd := math.Sqrt(p[i] * (1 - p[i]) / n); math.Abs(f-p[i]) > 5*sd+1e-12 {
				t.Fatalf("alpha=%v: action %d frequency %v, probability %v", alpha, i, f, p[i])
			}
		}
		if counts[4] != 0 {
			t.Fatalf("masked action sampled")
		}
		if g := Greedy(z, valid); g != 0 {
			t.Fatalf("greedy %d, want 0", g)
		}
	}
	// u just below 1 with rounding must not return a zero-probability entry.
	p := []float64{0.3, 0.3, 0.3999999, 0}
	if a := SampleWithUniform(p, 0.99999999999); a != 2 {
		t.Fatalf("SampleWithUniform at the top returned %d, want 2", a)
	}
	if a := SampleWithUniform([]float64{0, 0}, 0.5); a != -1 {
		t.Fatalf("no positive entry: got %d, want -1", a)
	}
	if g := Greedy([]float64{1, 3, 3}, nil); g != 1 {
		t.Fatalf("ties: greedy %d, want 1", g)
	}
	if g := Greedy([]float64{1, 3}, []bool{false, false}); g != -1 {
		t.Fatalf("all masked: greedy %d, want -1", g)
	}
	if g := Greedy([]float32{float32(math.Inf(-1)), float32(math.NaN()), -5}, nil); g != 2 {
		t.Fatalf("greedy with -Inf and NaN: %d, want 2", g)
	}
}

// Row-batched calls equal row-by-row calls, including rows of one action,
// and the hot paths allocate nothing.
func TestRowsAndAllocations(t *testing.T) {
	rng := newRNG(22)
	for _, k := range []int{1, 3, 17} {
		rows := 5
		z := randomLogits(rng, rows*k, 2)
		valid := make([]bool, rows*k)
		for i := range valid {
			valid[i] = rng.Float64() < 0.8 || i%k == 0
		}
		dst := make([]float64, rows*k)
		tau := make([]float64, rows)
		sup := make([]int, rows)
		SparsemaxRows(dst, z, k, valid, tau, sup)
		for r := 0; r < rows; r++ {
			p := make([]float64, k)
			tt, s := Sparsemax(p, z[r*k:(r+1)*k], valid[r*k:(r+1)*k])
			assertClose(t, "sparsemax rows", dst[r*k:(r+1)*k], p, 0)
			if tt != tau[r] || s != sup[r] {
				t.Fatalf("row %d: tau/support %v/%d vs %v/%d", r, tau[r], sup[r], tt, s)
			}
		}
		EntmaxRows(dst, z, k, valid, 1.5, tau, sup)
		for r := 0; r < rows; r++ {
			p := make([]float64, k)
			Entmax(p, z[r*k:(r+1)*k], valid[r*k:(r+1)*k], 1.5)
			assertClose(t, "entmax rows", dst[r*k:(r+1)*k], p, 0)
		}
		SoftmaxRows(dst, z, k, nil)
		lse := make([]float64, rows)
		lp := make([]float64, rows*k)
		LogSoftmaxRows(lp, z, k, nil, lse)
		for r := 0; r < rows; r++ {
			p := make([]float64, k)
			Softmax(p, z[r*k:(r+1)*k], nil)
			assertClose(t, "softmax rows", dst[r*k:(r+1)*k], p, 0)
			if lse[r] != LogSumExp(z[r*k:(r+1)*k], nil) {
				t.Fatalf("lse row %d", r)
			}
		}
	}
	z := make([]float32, 200)
	for i := range z {
		z[i] = float32(rng.NormFloat64())
	}
	p := make([]float32, 200)
	v := make([]float32, 200)
	fns := map[string]func(){
		"softmax":     func() { Softmax(p, z, nil) },
		"logsumexp":   func() { LogSumExp(z, nil) },
		"sparsemax":   func() { Sparsemax(p, z, nil) },
		"pivot":       func() { SparsemaxWith(Pivot, p, z, nil) },
		"sort":        func() { SparsemaxWith(Sort, p, z, nil) },
		"jvp":         func() { SparsemaxJVP(v, p, z) },
		"entmax1.5":   func() { Entmax(p, z, nil, 1.5) },
		"entmax1.3":   func() { Entmax(p, z, nil, 1.3) },
		"entmaxjvp":   func() { EntmaxJVP(v, p, z, 1.3) },
		"spmax":       func() { Spmax(z, nil, v) },
		"sparse step": func() { SparseStep(v, SparseRow[float32]{Z: z, P: p}, 3, 0.5, 0, 0, 1) },
		"sample":      func() { SampleWithUniform(p, 0.5) },
	}
	for name, f := range fns {
		if n := testing.AllocsPerRun(20, f); n != 0 {
			t.Fatalf("%s allocates %v times per call", name, n)
		}
	}
}
