package train

import (
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// NetFor is the network family an observation space calls for: the LSTM (config.NetLSTM) for a
// Discrete observation, a token it embeds and reads over whole episodes (the algorithmic tasks);
// the feed-forward networks (config.NetMLP) for every other space, flattened into a vector.
func NetFor(obs envs.Space) config.Net {
	if _, ok := obs.(envs.Discrete); ok {
		return config.NetLSTM
	}
	return config.NetMLP
}

// ResolveNet returns cfg with Net "auto" replaced by NetFor of the env's observation space; a Net
// that was given is kept. The space is read from one copy of the env made with its default options
// from the Go-native registry. An env that registry does not hold (a Gymnasium env served through
// the bridge) gets the feed-forward networks without a server being started to ask: they take
// every observation space the bridge flattens.
func ResolveNet(cfg config.Config) config.Config {
	if cfg.Net == config.NetAuto {
		cfg.Net = NetFor(observationSpace(cfg.Env))
	}
	return cfg
}

// observationSpace is the observation space of a Go-native env id, or nil when the registry does
// not hold the id or cannot make it.
func observationSpace(id string) envs.Space {
	env, err := registry.Default().Make(id, nil)
	if err != nil {
		return nil
	}
	defer env.Close()
	return env.ObservationSpace()
}
