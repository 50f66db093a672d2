package pcl_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/model/lstm"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// The lagged network moves by θ̄ ← L·θ̄ + (1−L)·θ after every optimiser step, starts at the
// network's parameters, and the learner's loss bootstraps from it: in the separate form from its
// value head read off directly, in the unified form from its Q's value operator.
func TestTargetLagUpdate(t *testing.T) {
	for _, form := range []config.Form{config.FormSeparate, config.FormUnified} {
		t.Run(string(form), func(t *testing.T) { testTargetLagUpdate(t, form) })
	}
}

func testTargetLagUpdate(t *testing.T, form config.Form) {
	cfg := pcl.SmallConfig(config.AlgoSparse, form)
	cfg.TargetLag = 0.75
	l, err := lstm.NewLearner(cfg, testSpec, tensor.GonumEngine())
	if err != nil {
		t.Fatal(err)
	}
	params := l.Params()
	for i, p := range params {
		if got := pcl.LaggedParams(l)[i].Value.Data; !slices.Equal(got, p.Value.Data) {
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
			before[i] = append([]float32(nil), pcl.LaggedParams(l)[i].Value.Data...)
		}
		if _, err := l.TrainStep(randomEpisodes(rng, 6)); err != nil {
			t.Fatal(err)
		}
		for i, p := range params {
			for j, v := range p.Value.Data {
				want := float32(0.75)*before[i][j] + float32(0.25)*v
				if got := pcl.LaggedParams(l)[i].Value.Data[j]; got != want {
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
		copy(pcl.LaggedParams(l)[i].Value.Data, p.Value.Data)
	}
	same, err := l.Loss(eps, false)
	if err != nil {
		t.Fatal(err)
	}
	if lagged.Loss == same.Loss {
		t.Errorf("loss %v with the lagged network and with a copy of the network alike: the targets are not read", lagged.Loss)
	}
	pcl.DropLagged(l)
	if own, _ := l.Loss(eps, false); math.Abs(own.Loss-same.Loss) > 1e-9*(1+own.Loss) {
		t.Errorf("lagged copy equal to the network: loss %v, without a lagged copy %v", same.Loss, own.Loss)
	}
	for i, p := range params {
		if !slices.Equal(p.Value.Data, snapshot[i]) {
			t.Errorf("%s changed by computing a loss", p.Name)
		}
	}
}

// With target values and a trust region the gradient is still the exact gradient of the loss
// (the lagged network's values and policy are constants), against finite differences, for both
// algorithms; a trust region without a lagged network, in the unified form or for Tsallis PCL is
// refused.
func TestTrustRegionGradientFiniteDifferences(t *testing.T) {
	for i, algo := range []config.Algo{config.AlgoSoft, config.AlgoSparse} {
		cfg := pcl.SmallConfig(algo, config.FormSeparate)
		cfg.PGScale, cfg.CriticWeight, cfg.Seed = config.PGScaleNone, 1, int64(40+i)
		cfg.TargetLag, cfg.TrustRegion = 0.5, 0.2
		l, err := lstm.NewLearner(cfg, testSpec, tensor.GonumEngine())
		if err != nil {
			t.Fatal(err)
		}
		scaleLogitHead(l, 4)
		rng := rand.New(rand.NewPCG(uint64(i), 11))
		// A lagged network away from the online one.
		for _, p := range pcl.LaggedParams(l) {
			for k := range p.Value.Data {
				p.Value.Data[k] += float32(0.3 * rng.NormFloat64())
			}
		}
		eps := randomEpisodes(rng, 4)
		checkGradientFD(t, l, eps, rng, string(algo)+" with a trust region")
		// The trust region is used: the loss moves with λ.
		with, _ := l.Loss(eps, false)
		pcl.SetTrustLambda(l, 0)
		without, _ := l.Loss(eps, false)
		if with.Loss == without.Loss {
			t.Errorf("%s: loss %v with and without the trust region", algo, with.Loss)
		}
	}
	for name, edit := range map[string]func(*config.Config){
		"no lag":  func(c *config.Config) { c.TargetLag = 0 },
		"unified": func(c *config.Config) { c.Form = config.FormUnified },
		"tsallis": func(c *config.Config) { c.Algo = config.AlgoTsallis },
	} {
		cfg := pcl.SmallConfig(config.AlgoSparse, config.FormSeparate)
		cfg.TargetLag, cfg.TrustRegion = 0.5, 0.2
		edit(&cfg)
		if _, err := lstm.NewLearner(cfg, testSpec, tensor.GonumEngine()); err == nil {
			t.Errorf("%s: a trust region was accepted", name)
		}
	}
}
