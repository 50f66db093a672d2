package pcl

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
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

// The lagged network moves by θ̄ ← L·θ̄ + (1−L)·θ after every optimiser step, starts at the
// network's parameters, and the learner's loss bootstraps from it: in the separate form from its
// value head read off directly, in the unified form from its Q's value operator.
func TestTargetLagUpdate(t *testing.T) {
	for _, form := range []config.Form{config.FormSeparate, config.FormUnified} {
		t.Run(string(form), func(t *testing.T) { testTargetLagUpdate(t, form) })
	}
}

func testTargetLagUpdate(t *testing.T, form config.Form) {
	cfg := testConfig(config.AlgoSparse, form)
	cfg.TargetLag = 0.75
	l, err := NewLearner(cfg, testSpec, tensor.GonumEngine())
	if err != nil {
		t.Fatal(err)
	}
	params := l.Params()
	for i, p := range params {
		if got := l.target.params[i].Value.Data; !slices.Equal(got, p.Value.Data) {
			t.Fatalf("%s: the lagged copy does not start at the network's values", p.Name)
		}
	}
	if n, want := len(l.StateParams()), len(l.Opt.StateParams())+len(params); n != want {
		t.Fatalf("%d state parameters, want %d: the optimiser's and the lagged network's", n, want)
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for step := range 3 {
		before := make([][]float32, len(params))
		for i := range params {
			before[i] = append([]float32(nil), l.target.params[i].Value.Data...)
		}
		if _, err := l.TrainStep(randomEpisodes(rng, 6)); err != nil {
			t.Fatal(err)
		}
		for i, p := range params {
			for j, v := range p.Value.Data {
				want := float32(0.75)*before[i][j] + float32(0.25)*v
				if got := l.target.params[i].Value.Data[j]; got != want {
					t.Fatalf("step %d, %s[%d]: lagged %v, want 0.75·%v + 0.25·%v = %v", step, p.Name, j, got, before[i][j], v, want)
				}
			}
		}
	}
	// The loss reads the lagged values: it differs from the loss with the lagged copy set to the
	// network's own values, and the network's parameters are left as they were.
	eps := randomEpisodes(rng, 6)
	lagged, err := l.Loss(eps, false)
	if err != nil {
		t.Fatal(err)
	}
	snapshot := make([][]float32, len(params))
	for i, p := range params {
		snapshot[i] = append([]float32(nil), p.Value.Data...)
		copy(l.target.params[i].Value.Data, p.Value.Data)
	}
	same, err := l.Loss(eps, false)
	if err != nil {
		t.Fatal(err)
	}
	if lagged.Loss == same.Loss {
		t.Errorf("loss %v with the lagged network and with a copy of the network alike: the targets are not read", lagged.Loss)
	}
	l.target = nil
	if own, _ := l.Loss(eps, false); math.Abs(own.Loss-same.Loss) > 1e-9*(1+own.Loss) {
		t.Errorf("lagged copy equal to the network: loss %v, without a lagged copy %v", same.Loss, own.Loss)
	}
	for i, p := range params {
		if !slices.Equal(p.Value.Data, snapshot[i]) {
			t.Errorf("%s changed by computing a loss", p.Name)
		}
	}
}
