package pcl

import (
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
)

// NewAlgorithm and NewHeads choose the algorithm once from the config: its entropic index and
// its multiplier heads, and refuse an unknown algorithm or form as a config error instead of
// falling through to one of the others.
func TestNewHeadsByAlgorithm(t *testing.T) {
	cases := []struct {
		algo               config.Algo
		form               config.Form
		q                  float64
		sizes              []int
		vHead, lambda, big int
		sparseGrad         bool
		scaledGrad         bool
		err                string
	}{
		{config.AlgoSoft, config.FormSeparate, 1, []int{5, 1}, 1, -1, -1, false, true, ""},
		{config.AlgoSoft, config.FormUnified, 1, []int{5}, -1, -1, -1, false, true, ""},
		{config.AlgoSparse, config.FormSeparate, 2, []int{5, 1, 1, 1}, 1, 2, 3, true, false, ""},
		{config.AlgoSparse, config.FormUnified, 2, []int{5, 1, 1}, -1, 1, 2, true, false, ""},
		{config.AlgoTsallis, config.FormSeparate, 1.5, []int{5, 1, 1}, 1, 2, -1, false, false, ""},
		{config.AlgoTsallis, config.FormUnified, 1.5, []int{5, 1}, -1, 1, -1, false, false, ""},
		{"entmax", config.FormSeparate, 0, nil, 0, 0, 0, false, false, `algo = "entmax"`},
		{"", config.FormSeparate, 0, nil, 0, 0, 0, false, false, `algo = ""`},
		{config.AlgoSparse, "joint", 0, nil, 0, 0, 0, false, false, `form = "joint"`},
	}
	for _, c := range cases {
		cfg := testConfig(c.algo, c.form)
		h, err := NewHeads(cfg.LearnerConfig, 5)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s/%s: error %v, want one naming %s", c.algo, c.form, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s/%s: %v", c.algo, c.form, err)
		}
		if h.Algo.Name() != c.algo || h.Algo.Q() != c.q {
			t.Errorf("%s/%s: algorithm %s with q %v, want %s with %v", c.algo, c.form, h.Algo.Name(), h.Algo.Q(), c.algo, c.q)
		}
		if len(h.Sizes) != len(c.sizes) || h.VHead != c.vHead || h.LambdaHead != c.lambda || h.BigHead != c.big {
			t.Errorf("%s/%s: sizes %v, heads V %d lambda %d Lambda %d; want %v, %d %d %d", c.algo, c.form, h.Sizes,
				h.VHead, h.LambdaHead, h.BigHead, c.sizes, c.vHead, c.lambda, c.big)
		}
		for i := range min(len(h.Sizes), len(c.sizes)) {
			if h.Sizes[i] != c.sizes[i] {
				t.Errorf("%s/%s: sizes %v, want %v", c.algo, c.form, h.Sizes, c.sizes)
			}
		}
		if h.TakesSparseGrad() != c.sparseGrad {
			t.Errorf("%s/%s: TakesSparseGrad %v, want %v", c.algo, c.form, h.TakesSparseGrad(), c.sparseGrad)
		}
		if h.TakesScaledGrad() != c.scaledGrad {
			t.Errorf("%s/%s: TakesScaledGrad %v, want %v", c.algo, c.form, h.TakesScaledGrad(), c.scaledGrad)
		}
	}
}
