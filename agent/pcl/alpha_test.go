package pcl_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/model/lstm"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// A learner whose weight was changed with SetAlpha computes the loss and gradient of a learner
// built with that weight (same parameters), in every algorithm and form.
func TestSetAlphaMatchesFreshLearner(t *testing.T) {
	for i, af := range algoForms {
		cfg := pcl.SmallConfig(af.algo, af.form)
		cfg.Seed = int64(30 + i)
		moved, err := lstm.NewLearner(cfg, testSpec, tensor.GonumEngine())
		if err != nil {
			t.Fatal(err)
		}
		if err := moved.SetAlpha(0.07); err != nil {
			t.Fatal(err)
		}
		cfg.Alpha = 0.07
		fresh, err := lstm.NewLearner(cfg, testSpec, tensor.GonumEngine())
		if err != nil {
			t.Fatal(err)
		}
		eps := randomEpisodes(rand.New(rand.NewPCG(uint64(i), 9)), 4)
		a, err := moved.Loss(eps, true)
		if err != nil {
			t.Fatal(err)
		}
		b, err := fresh.Loss(eps, true)
		if err != nil {
			t.Fatal(err)
		}
		if a.Loss != b.Loss || moved.Alpha() != 0.07 {
			t.Errorf("%s/%s: loss after SetAlpha %v, fresh learner %v (alpha %v)", af.algo, af.form, a.Loss, b.Loss, moved.Alpha())
		}
		for k, p := range moved.Params() {
			q := fresh.Params()[k]
			for j := range p.Grad.Data {
				if math.Abs(float64(p.Grad.Data[j]-q.Grad.Data[j])) > 1e-6 {
					t.Fatalf("%s/%s: %s gradient differs after SetAlpha", af.algo, af.form, p.Name)
				}
			}
		}
	}
	l, _ := lstm.NewLearner(pcl.SmallConfig("sparse", "separate"), testSpec, tensor.GonumEngine())
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if l.SetAlpha(bad) == nil {
			t.Errorf("SetAlpha(%v) accepted", bad)
		}
	}
}
