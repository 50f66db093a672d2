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

// ResolveGrid gives an mlp run over a continuous action space the evaluated grid when none was
// given, and Resolve then turns observation normalisation on unless --norm-obs was given; a grid
// given (5^6) takes the same defaults; a Discrete action space and the algorithmic tasks keep no
// grid, and the lookup is asked only when the answer matters.
func TestResolveGrid(t *testing.T) {
	continuous := func(env string) (bool, error) {
		switch env {
		case "HalfCheetah-v5":
			return true, nil
		case "CartPole-v1":
			return false, nil
		}
		return false, errors.New("unknown environment id " + env)
	}
	cases := []struct {
		name     string
		env      string
		grid     int
		given    []string
		wantGrid int
		wantNorm bool
		chosen   bool
		asked    bool
	}{
		{"plain command", "HalfCheetah-v5", 0, nil, config.DefaultGrid, true, true, true},
		{"--grid 5", "HalfCheetah-v5", 5, []string{"grid"}, 5, true, false, false},
		{"--norm-obs=false honoured", "HalfCheetah-v5", 0, []string{"norm_obs"}, config.DefaultGrid, false, true, true},
		{"discrete actions", "CartPole-v1", 0, nil, 0, false, false, true},
		{"algorithmic task", "Copy-v0", 0, nil, 0, false, false, false},
	}
	for _, tc := range cases {
		cfg := config.Default()
		cfg.Env, cfg.Grid = tc.env, tc.grid
		given := func(f string) bool { return slices.Contains(tc.given, f) }
		asked := false
		lookup := func(env string) (bool, error) { asked = true; return continuous(env) }
		got, chosen, err := ResolveGrid(cfg, given, lookup)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got, err = Resolve(got, given, nil); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got.Grid != tc.wantGrid || got.NormObs != tc.wantNorm || chosen != tc.chosen || asked != tc.asked {
			t.Errorf("%s: grid %d, norm_obs %v, chosen %v, asked %v; want %d, %v, %v, %v", tc.name, got.Grid, got.NormObs, chosen, asked,
				tc.wantGrid, tc.wantNorm, tc.chosen, tc.asked)
		}
		if tc.chosen && (!got.AlphaAuto || got.TrainSteps != 4 || got.TrustRegion != 0.01) {
			t.Errorf("%s: the grid's levers not applied: alpha_auto %v, train_steps %d, trust_region %v", tc.name, got.AlphaAuto, got.TrainSteps, got.TrustRegion)
		}
	}
	if _, _, err := ResolveGrid(config.Default(), func(string) bool { return false }, continuous); err != nil {
		t.Errorf("Copy-v0 asked the lookup: %v", err)
	}
	cfg := config.Default()
	cfg.Env = "Unknown-v0"
	cfg.Net = config.NetMLP
	if _, _, err := ResolveGrid(cfg, func(string) bool { return false }, continuous); err == nil {
		t.Error("an unknown env: no error from the lookup")
	}
}
