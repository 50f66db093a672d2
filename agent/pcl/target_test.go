package pcl

import (
	"math"
	"math/rand/v2"
	"testing"
)

// With bootstrap targets, each consistency ends at γ^k·Targets[s+k]: the loss is the direct
// definition with V(s+k) read from the targets, and its gradient reaches V only where a path
// starts (finite differences agree).
func TestPathLossTargets(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const gamma, d = 0.9, 4
	in := randomInputs(rng, 9, 5, false)
	in.Targets = make([]float64, len(in.Values))
	for i := range in.Targets {
		in.Targets[i] = rng.NormFloat64()
	}
	// The direct definition with the targets at every path's end: V(s) stays the network's.
	direct := func() float64 {
		total := 0.0
		for b := range in.B {
			L := in.Lengths[b]
			end := func(t int) float64 {
				if t == L && in.Terminated[b] {
					return 0
				}
				return in.Targets[t*in.B+b]
			}
			path := func(s, k int) float64 {
				c := -in.Values[s*in.B+b] + math.Pow(gamma, float64(k))*end(s+k)
				for i := range k {
					c += math.Pow(gamma, float64(i)) * (in.Rewards[(s+i)*in.B+b] + in.Terms[(s+i)*in.B+b])
				}
				return c
			}
			for k := 1; k <= d-1; k++ {
				c := math.Pow(gamma, float64(d-k)) * path(0, min(k, L))
				total += 0.5 * c * c
			}
			for s := range L {
				c := path(s, min(d, L-s))
				total += 0.5 * c * c
			}
		}
		return total / float64(in.B)
	}
	var g PathGrads
	got, err := PathLoss(in, gamma, d, &g)
	if err != nil {
		t.Fatal(err)
	}
	if want := direct(); math.Abs(got-want) > 1e-9*(1+want) {
		t.Fatalf("loss with targets %v, direct definition %v", got, want)
	}
	const h = 1e-6
	fd := func(xs []float64, i int) float64 {
		old := xs[i]
		xs[i] = old + h
		lp, _ := PathLoss(in, gamma, d, nil)
		xs[i] = old - h
		lm, _ := PathLoss(in, gamma, d, nil)
		xs[i] = old
		return (lp - lm) / (2 * h)
	}
	for i := range in.Values {
		if f := fd(in.Values, i); math.Abs(f-g.DValues[i]) > 1e-6*(1+math.Abs(f)) {
			t.Errorf("values[%d]: analytic %v, finite difference %v", i, g.DValues[i], f)
		}
	}
	// The targets are used: moving one that ends a path changes the loss.
	if f := fd(in.Targets, in.B); f == 0 {
		t.Errorf("the loss does not depend on the target at row (1, 0): the targets are ignored")
	}
	// With targets equal to the values the loss is the ordinary one.
	copy(in.Targets, in.Values)
	withTargets, _ := PathLoss(in, gamma, d, nil)
	plain := in
	plain.Targets = nil
	if without, _ := PathLoss(plain, gamma, d, nil); math.Abs(withTargets-without) > 1e-12*(1+without) {
		t.Errorf("targets equal to the values: loss %v, without targets %v", withTargets, without)
	}
}
