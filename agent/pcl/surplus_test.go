package pcl

import (
	"math"
	"testing"
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
