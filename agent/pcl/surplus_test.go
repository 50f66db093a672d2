package pcl

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Two sequences worked by hand at gamma 0.5: a terminated one of length 2 (V(s_2) ignored) and a
// truncated one of length 3 that bootstraps from V(s_3) = 2. A sign slip on V, a missing term or
// a discount applied once too often changes every figure.
func TestSurplusesHandExample(t *testing.T) {
	const T, B = 3, 2
	o := Objective{Gamma: 0.5}
	o.in = PathInputs{T: T, B: B, Lengths: []int{2, 3}, Terminated: []bool{true, false},
		Values: make([]float64, (T+1)*B), Rewards: make([]float64, T*B), Terms: make([]float64, T*B)}
	set := func(s []float64, t, b int, v float64) { s[t*B+b] = v }
	// Sequence 0: r = (1, 2), terms (0.5, -0.5), V = (1, 3, [99 ignored]).
	set(o.in.Rewards, 0, 0, 1)
	set(o.in.Rewards, 1, 0, 2)
	set(o.in.Terms, 0, 0, 0.5)
	set(o.in.Terms, 1, 0, -0.5)
	set(o.in.Values, 0, 0, 1)
	set(o.in.Values, 1, 0, 3)
	set(o.in.Values, 2, 0, 99)
	// S(1) = 1.5 - 3 = -1.5; S(0) = 1.5 + 0.5*1.5 - 1 = 1.25.
	// Sequence 1: r = (0, 0, 1), V = (0.2, 0.1, 0.4, 2).
	set(o.in.Rewards, 2, 1, 1)
	set(o.in.Values, 0, 1, 0.2)
	set(o.in.Values, 1, 1, 0.1)
	set(o.in.Values, 2, 1, 0.4)
	set(o.in.Values, 3, 1, 2)
	// S(2) = 1 + 0.5*2 - 0.4 = 1.6; S(1) = 0.5*2 - 0.1 = 0.9; S(0) = 0.5*1 - 0.2 = 0.3.
	got := o.Surpluses(nil)
	want := []float64{1.25, 1.6}
	for b := range want {
		if math.Abs(got[b]-want[b]) > 1e-12 {
			t.Errorf("sequence %d: surplus %v, want %v", b, got[b], want[b])
		}
	}
}

// After a learner's loss, the surpluses are those of its values and terms, the same on the fast
// and the reference path, for every algorithm and form.
func TestSurplusesAfterLoss(t *testing.T) {
	for i, af := range algoForms {
		cfg := testConfig(af.algo, af.form)
		cfg.Seed = int64(30 + i)
		eps := randomEpisodes(rand.New(rand.NewPCG(uint64(i), 9)), 6)
		var runs [2][]float64
		for k, reference := range []bool{false, true} {
			l, err := NewLearner(cfg, testSpec, tensor.GonumEngine())
			if err != nil {
				t.Fatal(err)
			}
			l.Objective().Reference = reference
			if _, err := l.Loss(eps, false); err != nil {
				t.Fatal(err)
			}
			runs[k] = l.Objective().Surpluses(nil)
			// Recompute episode by episode from the returned per-row values and terms.
			B := len(eps)
			for b, e := range eps {
				L := e.Len()
				tail := 0.0
				if !e.Terminated {
					tail = l.Objective().Value(L*B + b)
				}
				best := math.Inf(-1)
				for s := L - 1; s >= 0; s-- {
					tail = e.Rewards[s] + l.Objective().Term(s*B+b) + cfg.Gamma*tail
					best = math.Max(best, tail-l.Objective().Value(s*B+b))
				}
				if math.Abs(runs[k][b]-best) > 1e-9 {
					t.Errorf("%s/%s reference %v: episode %d surplus %v, recomputed %v", af.algo, af.form, reference, b, runs[k][b], best)
				}
			}
		}
		for b := range runs[0] {
			if d := math.Abs(runs[0][b] - runs[1][b]); d > 1e-4*(1+math.Abs(runs[1][b])) {
				t.Errorf("%s/%s: episode %d surplus %v on the fast path, %v on the reference", af.algo, af.form, b, runs[0][b], runs[1][b])
			}
		}
	}
}
