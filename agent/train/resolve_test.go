package train

import (
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
)

// Resolve applies the defaults of the fields not given, in one place: the algorithm's alpha, the
// env's threshold, the family of "auto", and the long-episode preset for the mlp family only; a
// given field keeps its value.
func TestResolve(t *testing.T) {
	cases := []struct {
		name             string
		env, algo        string
		given            []string
		alpha            float64
		net              string
		gamma, threshold float64
		alphaIn, gammaIn float64
		thresholdIn      float64
	}{
		{"copy soft", "Copy-v0", config.AlgoSoft, nil, 0.025, config.NetLSTM, 0.9, 25, 1, 0.9, 3},
		{"copy given alpha", "Copy-v0", config.AlgoSparse, []string{"alpha"}, 1, config.NetLSTM, 0.9, 25, 1, 0.9, 3},
		{"cartpole preset", "CartPole-v1", config.AlgoSparse, nil, 0.05, config.NetMLP, 0.99, 3, 1, 0.9, 3},
		{"cartpole given gamma and threshold", "CartPole-v1", config.AlgoSparse, []string{"gamma", "threshold"}, 0.05, config.NetMLP, 0.9, 3, 1, 0.9, 3},
	}
	for _, c := range cases {
		cfg := config.Default()
		cfg.Env, cfg.Algo, cfg.Alpha, cfg.Gamma, cfg.RewardThreshold = c.env, c.algo, c.alphaIn, c.gammaIn, c.thresholdIn
		given := func(name string) bool {
			for _, g := range c.given {
				if g == name {
					return true
				}
			}
			return false
		}
		got, err := Resolve(cfg, given)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got.Alpha != c.alpha || got.Net != c.net || got.Gamma != c.gamma || got.RewardThreshold != c.threshold {
			t.Errorf("%s: alpha %v net %s gamma %v threshold %v; want %v %s %v %v", c.name, got.Alpha, got.Net, got.Gamma,
				got.RewardThreshold, c.alpha, c.net, c.gamma, c.threshold)
		}
	}
}
