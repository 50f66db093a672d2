package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/envs/registry"
	"github.com/sparsepcl/sparsepcl/internal/envmaker"
	"github.com/sparsepcl/sparsepcl/internal/lab/bench"
)

// runBench times training iterations of the config flags' learner through train's loop
// (train.Family.Bench): on an algorithmic task the lstm learner's iterations, with replay and
// without evaluation or checkpoints; on a long-episode env (HalfCheetah through the bridge) the
// whole loop, env stepping and training, without evaluation. The flags of the run around the
// learner (iterations, evaluation, checkpoints, the output) do not apply.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench", stderr)
	cfg := config.Default()
	cfg.Base = 40
	iters := fs.Int("measure", 3, "measured iterations (the lstm family: after one warm-up)")
	var servers stringList
	fs.Var(&servers, "server", "`endpoint` of a running env server (tcp://host:port), repeatable; default: start one from .venv for ids that are not Go-native")
	remote := fs.Bool("remote", false, "serve the env from the Python server even when a Go-native version exists")
	var server serverFlags
	server.register(fs)
	cfgFlags := config.FlagNames()
	check := hideFlags(fs, func(name string) string {
		if cfgFlags[name] && !config.LearnerFlag(name) && !config.MLPFlag(name) {
			return "bench times the sampling and the training steps of its iterations, without the run around them"
		}
		return ""
	})
	given, err := parseTrainConfig(fs, args, &cfg)
	if err != nil {
		return err
	}
	if err := check(); err != nil {
		return err
	}
	if *iters < 1 {
		return usageError{fmt.Errorf("--measure = %d, want >= 1", *iters)}
	}
	reg := registry.Default()
	creds, err := server.credentials(servers)
	if err != nil {
		return err
	}
	maker := &envmaker.Maker{Registry: reg, Servers: servers, Credentials: creds, ForceRemote: *remote, Server: server.options()}
	resolved, err := resolveWith(ctx, cfg, given, maker, stderr)
	if err != nil {
		return err
	}
	fam := train.FamilyOf(resolved)
	if fam.Net() == config.NetLSTM {
		for name := range given {
			if config.MLPFlag(name) {
				return usageError{fmt.Errorf("--%s shapes long-episode (mlp) runs; %s trains the lstm family", name, resolved.Env)}
			}
		}
	}
	err = bench.Run(ctx, resolved, bench.Options{Registry: reg, Envs: train.FactoryEnvs{Factory: maker}, Measure: *iters}, stdout)
	if errors.Is(err, train.ErrUnsupported) {
		return usageError{err}
	}
	return interrupted(ctx, err, "bench stopped before its measurement was complete (it saves nothing)")
}
