package train

import (
	"errors"
	"slices"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
)

// Resolve applies the defaults of the fields not given, in one place: the algorithm's alpha, the
// env's threshold (the task's, then the registered one with a lookup), the family of "auto", and
// the long-episode preset for the mlp family only (with its weights for sparse and soft PCL, none
// for Tsallis); a given field keeps its value.
func TestResolve(t *testing.T) {
	registered := func(env string) (float64, bool, error) {
		switch env {
		case "CartPole-v1":
			return 475, true, nil
		case "Pendulum-v1":
			return 0, false, nil
		}
		return 0, false, errors.New("unknown environment id " + env)
	}
	cases := []struct {
		name             string
		env              string
		algo             config.Algo
		given            []string
		lookup           ThresholdLookup
		alpha            float64
		net              config.Net
		gamma, threshold float64
		noThreshold      bool
		alphaIn, gammaIn float64
		thresholdIn      float64
	}{
		{"copy soft", "Copy-v0", config.AlgoSoft, nil, nil, 0.025, config.NetLSTM, 0.9, 25, false, 1, 0.9, 3},
		{"copy given alpha", "Copy-v0", config.AlgoSparse, []string{"alpha"}, nil, 1, config.NetLSTM, 0.9, 25, false, 1, 0.9, 3},
		{"copy sparse", "Copy-v0", config.AlgoSparse, nil, nil, 0.05, config.NetLSTM, 0.9, 25, false, 0.2, 0.9, 3},
		{"cartpole preset", "CartPole-v1", config.AlgoSparse, nil, nil, 1, config.NetMLP, 0.99, 3, false, 0.2, 0.9, 3},
		{"cartpole soft preset", "CartPole-v1", config.AlgoSoft, nil, nil, 0.003, config.NetMLP, 0.99, 3, false, 0.2, 0.9, 3},
		{"cartpole tsallis, no preset weight", "CartPole-v1", config.AlgoTsallis, nil, nil, 0.05, config.NetMLP, 0.99, 3, false, 0.2, 0.9, 3},
		{"cartpole given alpha", "CartPole-v1", config.AlgoSparse, []string{"alpha"}, nil, 0.2, config.NetMLP, 0.99, 3, false, 0.2, 0.9, 3},
		{"cartpole given gamma and threshold", "CartPole-v1", config.AlgoSparse, []string{"gamma", "reward_threshold"}, nil, 1, config.NetMLP, 0.9, 3, false, 1, 0.9, 3},
		{"cartpole registered", "CartPole-v1", config.AlgoSparse, nil, registered, 1, config.NetMLP, 0.99, 475, false, 1, 0.9, 3},
		{"cartpole given threshold, lookup unused", "CartPole-v1", config.AlgoSparse, []string{"reward_threshold"}, registered, 1, config.NetMLP, 0.99, 3, false, 1, 0.9, 3},
		{"pendulum registers none", "Pendulum-v1", config.AlgoSparse, nil, registered, 1, config.NetMLP, 0.99, 0, true, 1, 0.9, 3},
	}
	for _, c := range cases {
		cfg := config.Default()
		cfg.Env, cfg.Algo, cfg.Alpha, cfg.Gamma, cfg.RewardThreshold = c.env, c.algo, c.alphaIn, c.gammaIn, c.thresholdIn
		if c.env == "Pendulum-v1" {
			cfg.Grid = 3
		}
		given := func(field string) bool { return slices.Contains(c.given, field) }
		got, err := Resolve(cfg, given, c.lookup)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got.Alpha != c.alpha || got.Net != c.net || got.Gamma != c.gamma || got.RewardThreshold != c.threshold || got.NoThreshold != c.noThreshold {
			t.Errorf("%s: alpha %v net %s gamma %v threshold %v (none %v); want %v %s %v %v (none %v)", c.name, got.Alpha, got.Net, got.Gamma,
				got.RewardThreshold, got.NoThreshold, c.alpha, c.net, c.gamma, c.threshold, c.noThreshold)
		}
	}
}

// With a lookup, an invalid config is refused before the lookup is asked, and a lookup's error is
// Resolve's.
func TestResolveValidatesBeforeLookup(t *testing.T) {
	asked := 0
	lookup := func(string) (float64, bool, error) { asked++; return 0, false, errors.New("no server") }
	none := func(string) bool { return false }
	bad := config.Default()
	bad.Gamma = 2
	var fe *config.FieldError
	if _, err := Resolve(bad, none, lookup); !errors.As(err, &fe) || fe.Field != "gamma" || asked != 0 {
		t.Errorf("invalid config: error %v, lookup asked %d times; want a gamma FieldError, no lookup", err, asked)
	}
	if _, err := Resolve(config.Default(), none, lookup); err == nil || err.Error() != "no server" || asked != 1 {
		t.Errorf("lookup failure: error %v, asked %d times", err, asked)
	}
	// Without a lookup nothing is validated: the caller may still change the config.
	if _, err := Resolve(bad, none, nil); err != nil {
		t.Errorf("no lookup: %v", err)
	}
}
