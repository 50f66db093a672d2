package train

import (
	"context"
	"errors"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// replayRatioConfig is a small long-episode run whose checkpoint at iteration 10 falls on an
// episode boundary (Pendulum's 200 steps), where a resume is exact.
func replayRatioConfig() config.Config {
	cfg := config.Default()
	cfg.Env, cfg.Grid, cfg.Net, cfg.NumEnvs, cfg.StepsPerIter, cfg.SubEpisodes, cfg.MLPHidden = "Pendulum-v1", 5, config.NetMLP, 2, 20, 4, 8
	cfg.Gamma, cfg.Alpha, cfg.LearningRate = 0.99, 0.5, 1e-3
	cfg.EvalEvery, cfg.Iters, cfg.CheckpointEvery = 0, 13, 10
	return cfg
}

// --train-steps K takes K optimiser steps per iteration, each on its own batch, and with a target
// lag the run still resumes exactly (the lagged network travels in the checkpoint).
func TestReplayRatioAndTargetLag(t *testing.T) {
	reg := registry.Default()
	run := func(edit func(*config.Config), dir string, resume bool) Summary {
		t.Helper()
		cfg := replayRatioConfig()
		edit(&cfg)
		sum, err := Run(context.Background(), cfg, Options{Dir: dir, Resume: resume, Registry: reg, Engine: tensor.GonumEngine()})
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	one := run(func(*config.Config) {}, t.TempDir(), false)
	k1 := run(func(c *config.Config) { c.TrainSteps = 1 }, t.TempDir(), false)
	sameRows(t, "--train-steps 1 against the default", one.Rows, k1.Rows)

	k3 := run(func(c *config.Config) { c.TrainSteps = 3 }, t.TempDir(), false)
	if k3.Rows[0].ReplayLoss == one.Rows[0].ReplayLoss {
		t.Errorf("--train-steps 3: first iteration's mean replay loss %v equals one step's: the extra steps trained on the same batch or not at all", k3.Rows[0].ReplayLoss)
	}
	for _, tc := range []struct {
		name string
		edit func(*config.Config)
	}{
		{"k3", func(c *config.Config) { c.TrainSteps = 3 }},
		{"k3-lag", func(c *config.Config) { c.TrainSteps, c.TargetLag = 3, 0.9 }},
	} {
		full := run(tc.edit, t.TempDir(), false)
		dir := t.TempDir()
		run(func(c *config.Config) { tc.edit(c); c.Iters = 10 }, dir, false)
		resumed := run(tc.edit, dir, true)
		sameRows(t, tc.name, full.Rows, resumed.Rows)
	}
	lag := run(func(c *config.Config) { c.TrainSteps, c.TargetLag = 3, 0.9 }, t.TempDir(), false)
	if lag.Rows[len(lag.Rows)-1].ReplayLoss == k3.Rows[len(k3.Rows)-1].ReplayLoss {
		t.Errorf("--target-lag 0.9 left the loss where it was without one: the lagged values are not used")
	}
}

// The lstm family takes neither lever: it says so instead of ignoring them.
func TestReplayRatioIsMLPOnly(t *testing.T) {
	for _, edit := range []func(*config.Config){
		func(c *config.Config) { c.TrainSteps = 2 },
		func(c *config.Config) { c.TargetLag = 0.99 },
	} {
		cfg := resumeConfig()
		cfg.Iters = 2
		edit(&cfg)
		_, err := Run(context.Background(), cfg, Options{Dir: t.TempDir(), Registry: registry.Default(), Engine: tensor.GonumEngine()})
		var u *UnsupportedError
		if !errors.As(err, &u) {
			t.Errorf("lstm run with %+v: error %v, want an UnsupportedError", cfg.StepSamplingConfig, err)
		}
	}
}
