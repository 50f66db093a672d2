package train

import (
	"errors"
	"slices"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// NetFor chooses the family by the observation space: a Discrete token for the LSTM, anything
// else (flattened) for the feed-forward networks.
func TestNetFor(t *testing.T) {
	tests := []struct {
		name string
		obs  envs.Space
		want config.Net
	}{
		{"Discrete", envs.Discrete{N: 6}, config.NetLSTM},
		{"Box", envs.NewBox(-1, 1, envs.Float32, 4), config.NetMLP},
		{"MultiDiscrete", envs.MultiDiscrete{Nvec: []int64{2, 3}}, config.NetMLP},
		{"MultiBinary", envs.MultiBinary{N: 3}, config.NetMLP},
		{"Tuple of Discrete", envs.Tuple{Spaces: []envs.Space{envs.Discrete{N: 32}, envs.Discrete{N: 11}}}, config.NetMLP},
		{"unknown (not Go-native)", nil, config.NetMLP},
	}
	for _, tc := range tests {
		if got := NetFor(tc.obs); got != tc.want {
			t.Errorf("%s: NetFor = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// ResolveNet gives every env the family it had when "auto" was decided by the env id (the
// algorithmic tasks the LSTM, classic control and the Gymnasium envs the MLPs), and keeps a Net
// that was given.
func TestResolveNetFollowsTheObservationSpace(t *testing.T) {
	type tc struct {
		env       string
		net, want config.Net
	}
	tests := []tc{
		{"HalfCheetah-v5", config.NetAuto, config.NetMLP},
		{"FrozenLake-v1", config.NetAuto, config.NetMLP}, // served by Gymnasium: not asked
		{"Blackjack-v1", config.NetAuto, config.NetMLP},
		{"Copy-v0", config.NetMLP, config.NetMLP},
		{"CartPole-v1", config.NetLSTM, config.NetLSTM},
	}
	for _, id := range registry.Default().IDs() {
		want := config.NetMLP
		if _, err := algorithmic.TaskByID(id); err == nil {
			want = config.NetLSTM
		}
		tests = append(tests, tc{id, config.NetAuto, want})
	}
	for _, c := range tests {
		cfg := config.Default()
		cfg.Env, cfg.Net = c.env, c.net
		if got := ResolveNet(cfg).Net; got != c.want {
			t.Errorf("%s with net %q: resolved to %q, want %q", c.env, c.net, got, c.want)
		}
		if got := FamilyOf(cfg).Net(); got != c.want {
			t.Errorf("%s with net %q: family %q, want %q", c.env, c.net, got, c.want)
		}
	}
}

// Each family says which of the one-family tools it lacks, with an error that wraps
// ErrUnsupported and carries the tool, the family and the subject; Bench of the mlp family
// refuses the same way.
func TestFamilySupports(t *testing.T) {
	tools := []Tool{ToolDiagnose, ToolCompare, ToolPlay, ToolPerLength, ToolRecord, ToolObserver, ToolOverlap, ToolReturns}
	lacks := map[config.Net][]Tool{config.NetLSTM: {ToolRecord, ToolOverlap, ToolReturns},
		config.NetMLP: {ToolDiagnose, ToolCompare, ToolPlay, ToolPerLength, ToolObserver}}
	for _, env := range []string{"Copy-v0", "CartPole-v1"} {
		cfg := config.Default()
		cfg.Env = env
		fam := FamilyOf(cfg)
		for _, tool := range tools {
			err := fam.Supports(tool, env)
			want := slices.Contains(lacks[fam.Net()], tool)
			if (err != nil) != want || (err != nil && !errors.Is(err, ErrUnsupported)) {
				t.Errorf("%s (%s) tool %v: %v, want unsupported %v", env, fam.Net(), tool, err, want)
			}
			var ue *UnsupportedError
			if want && (!errors.As(err, &ue) || *ue != (UnsupportedError{Tool: tool, Family: fam.Net(), Subject: env})) {
				t.Errorf("%s tool %v: error %#v, want the tool, the family and the subject", env, tool, ue)
			}
		}
	}
}
