package train

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/model/mlp"
	"github.com/sparsepcl/sparsepcl/agent/replay"
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
	run := editedRunner(t, replayRatioConfig)
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

// The lstm family takes the same levers through the same learner: --train-steps K takes K replay
// steps after the on-policy step (K = 1 is the paper's iteration, bit for bit), and with a lagged
// target and a trust region the run still resumes exactly (the lagged network travels in the
// checkpoint). Only --overlap stays the long-episode runs': it says so instead of ignoring it.
func TestReplayRatioForEpisodes(t *testing.T) {
	reg := registry.Default()
	run := editedRunner(t, resumeConfig)
	one := run(func(*config.Config) {}, t.TempDir(), false)
	k1 := run(func(c *config.Config) { c.TrainSteps = 1 }, t.TempDir(), false)
	sameRows(t, "lstm --train-steps 1 against the default", one.Rows, k1.Rows)
	k3 := run(func(c *config.Config) { c.TrainSteps = 3 }, t.TempDir(), false)
	if k3.Rows[0].Loss != one.Rows[0].Loss {
		t.Errorf("--train-steps 3 changed the first on-policy step (loss %v, one step %v): it comes before the replay steps", k3.Rows[0].Loss, one.Rows[0].Loss)
	}
	if k3.Rows[0].ReplayLoss == one.Rows[0].ReplayLoss {
		t.Errorf("--train-steps 3: first iteration's mean replay loss %v equals one step's: the extra steps trained on the same batch or not at all", k3.Rows[0].ReplayLoss)
	}
	for _, tc := range []struct {
		name string
		edit func(*config.Config)
	}{
		{"lstm-k3", func(c *config.Config) { c.TrainSteps = 3 }},
		{"lstm-k2-lag-trust", func(c *config.Config) { c.TrainSteps, c.TargetLag, c.TrustRegion = 2, 0.9, 0.01 }},
	} {
		full := run(tc.edit, t.TempDir(), false)
		dir := t.TempDir()
		run(func(c *config.Config) { tc.edit(c); c.Iters = 20 }, dir, false)
		resumed := run(tc.edit, dir, true)
		sameRows(t, tc.name, full.Rows, resumed.Rows)
	}
	lag := run(func(c *config.Config) { c.TrainSteps, c.TargetLag = 3, 0.9 }, t.TempDir(), false)
	if lag.Rows[len(lag.Rows)-1].ReplayLoss == k3.Rows[len(k3.Rows)-1].ReplayLoss {
		t.Errorf("lstm --target-lag 0.9 left the loss where it was without one: the lagged values are not used")
	}
	cfg := resumeConfig()
	cfg.Iters, cfg.Overlap = 2, true
	_, err := Run(context.Background(), cfg, Options{Dir: t.TempDir(), Registry: reg, Engine: tensor.GonumEngine()})
	var u *UnsupportedError
	if !errors.As(err, &u) || u.Tool != ToolOverlap {
		t.Errorf("lstm run with --overlap: error %v, want an UnsupportedError for the overlap", err)
	}
	cfg = resumeConfig()
	cfg.Iters, cfg.TrainSteps, cfg.Replay = 2, 3, false
	if _, err := Run(context.Background(), cfg, Options{Dir: t.TempDir(), Registry: reg, Engine: tensor.GonumEngine()}); err == nil || !strings.Contains(err.Error(), "no replay") {
		t.Errorf("lstm run with --train-steps 3 and no replay: %v, want a refusal saying there is no replay", err)
	}
}

// The K batches of an iteration are K independent draws: the first is the single step's batch,
// no two are the same, and each holds SubEpisodes sub-episodes.
func TestReplayBatchesAreIndependentDraws(t *testing.T) {
	buf, err := replay.New[float32](replay.Steps(100_000), replay.Recency{Weight: 0.001})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for it := range 200 {
		s := &mlp.Segment{Iteration: it, Obs: make([]float32, 2*3), Actions: []int32{int32(rng.IntN(4)), 0}, Rewards: []float64{rng.Float64(), 0}}
		if err := buf.Add(nil, s, float64(it)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := replayRatioConfig()
	cfg.SubEpisodes, cfg.RecencyWeight = 8, 0.001
	cfg.TrainSteps = 1
	single := replayBatches(buf, iterRNG(cfg.Seed, 7, 3), cfg.GradientSteps(), cfg.SubEpisodes)
	cfg.TrainSteps = 5
	batches := replayBatches(buf, iterRNG(cfg.Seed, 7, 3), cfg.GradientSteps(), cfg.SubEpisodes)
	if len(single) != 1 || len(batches) != 5 {
		t.Fatalf("%d and %d batches, want 1 and 5", len(single), len(batches))
	}
	if !slices.Equal(batches[0], single[0]) {
		t.Errorf("the first of 5 batches differs from the single step's batch")
	}
	for i, b := range batches {
		if len(b) != 8 {
			t.Errorf("batch %d holds %d sub-episodes, want 8", i, len(b))
		}
		for j := range i {
			if slices.Equal(b, batches[j]) {
				t.Errorf("batches %d and %d are the same draw", j, i)
			}
		}
	}
}

// editedRunner returns a function that runs base's config, edited, into dir (resuming it on
// request) under the pure-Go engine, and fails the test on an error.
func editedRunner(t *testing.T, base func() config.Config) func(edit func(*config.Config), dir string, resume bool) Summary {
	return func(edit func(*config.Config), dir string, resume bool) Summary {
		t.Helper()
		cfg := base()
		edit(&cfg)
		sum, err := Run(context.Background(), cfg, Options{Dir: dir, Resume: resume, Registry: registry.Default(), Engine: tensor.GonumEngine()})
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
}
