package mlp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// A learner whose weight was changed with SetAlpha computes the loss and gradient of a learner
// built with that weight (same parameters), in every algorithm and form, and another weight
// gives another loss: the weight is read from one place.
func TestSetAlphaMatchesFreshLearner(t *testing.T) {
	for i, af := range algoForms {
		cfg := testConfig(af.algo, af.form, int64(40+i))
		moved, err := NewLearner(cfg, testDim, testActions, tensor.GonumEngine())
		if err != nil {
			t.Fatal(err)
		}
		sharpen(moved, 4)
		segs := randomSegments(rand.New(rand.NewPCG(uint64(i), 7)), 5)
		before, err := moved.Loss(segs, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := moved.SetAlpha(0.07); err != nil {
			t.Fatal(err)
		}
		cfg.Alpha = 0.07
		fresh, err := NewLearner(cfg, testDim, testActions, tensor.GonumEngine())
		if err != nil {
			t.Fatal(err)
		}
		sharpen(fresh, 4)
		a, err := moved.Loss(segs, true)
		if err != nil {
			t.Fatal(err)
		}
		b, err := fresh.Loss(segs, true)
		if err != nil {
			t.Fatal(err)
		}
		if a.Loss != b.Loss || moved.Alpha() != 0.07 {
			t.Errorf("%s/%s: loss after SetAlpha %v, fresh learner %v (alpha %v)", af.algo, af.form, a.Loss, b.Loss, moved.Alpha())
		}
		if a.Loss == before.Loss {
			t.Errorf("%s/%s: loss %v unchanged by SetAlpha(0.07) from alpha 0.3", af.algo, af.form, a.Loss)
		}
		for k, p := range moved.Params() {
			q := fresh.Params()[k]
			for j := range p.Grad.Data {
				if p.Grad.Data[j] != q.Grad.Data[j] {
					t.Fatalf("%s/%s: %s gradient differs after SetAlpha", af.algo, af.form, p.Name)
				}
			}
		}
	}
	l, err := NewLearner(testConfig("sparse", "separate", 1), testDim, testActions, tensor.GonumEngine())
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if l.SetAlpha(bad) == nil {
			t.Errorf("SetAlpha(%v) accepted", bad)
		}
	}
}
