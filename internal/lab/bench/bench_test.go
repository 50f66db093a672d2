package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// smallEpisodesConfig is a Copy run of a few small iterations.
func smallEpisodesConfig() config.Config {
	cfg := config.Default()
	cfg.Base, cfg.BatchSize, cfg.Hidden, cfg.Iters, cfg.EvalEvery, cfg.EvalEpisodes = 3, 8, 8, 2, 1, 4
	return cfg
}

// smallStepsConfig is a CartPole run of the mlp family with tiny iterations.
func smallStepsConfig() config.Config {
	cfg := config.Default()
	cfg.Env, cfg.Net, cfg.NumEnvs, cfg.StepsPerIter, cfg.SubEpisodes, cfg.MLPHidden = "CartPole-v1", config.NetMLP, 2, 10, 4, 8
	cfg.EvalEvery, cfg.EvalEpisodes, cfg.Iters, cfg.CheckpointEvery, cfg.Gamma = 2, 1, 8, 4, 0.99
	return cfg
}

// Bench trains through the loop and reports its header, the rates and the phase split.
func TestBenchThroughLoop(t *testing.T) {
	var out strings.Builder
	if err := Run(context.Background(), smallEpisodesConfig(), Options{Registry: registry.Default(), Measure: 1}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"bench: Copy-v0 base 3 (|A| = 12), sparse/separate, batch 8, hidden 8, BLAS ", "\niterations/s: ", "s/iteration: sampling ",
		", two training steps ", " env steps/iteration)\ntraining step: ", " GFLOP/s (matrix products performed); bare gemm "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("bench output %q lacks %q", out.String(), want)
		}
	}
}

// The mlp family's bench times the whole long-episode loop: the env steps it took per second of
// wall time and the shares of env stepping and training, which cannot add up to more than the
// wall time while the two take turns.
func TestMLPBenchTimesTheLoop(t *testing.T) {
	cfg := smallStepsConfig()
	var out strings.Builder
	if err := Run(context.Background(), cfg, Options{Registry: registry.Default(), Engine: tensor.GonumEngine(), Measure: 5}, &out); err != nil {
		t.Fatal(err)
	}
	var steps int
	var wall, env, policy, train, eff float64
	lines := strings.Split(out.String(), "\n")
	if len(lines) < 3 {
		t.Fatalf("bench wrote %q", out.String())
	}
	if _, err := fmt.Sscanf(lines[1][strings.Index(lines[1], "(")+1:], "%d env steps in %g s", &steps, &wall); err != nil {
		t.Fatalf("line %q: %v", lines[1], err)
	}
	if _, err := fmt.Sscanf(lines[2], "wall time: env stepping %g%%, sampling forwards %g%%, training %g%%; overlap efficiency %g", &env, &policy, &train, &eff); err != nil {
		t.Fatalf("line %q: %v", lines[2], err)
	}
	if want := 5 * cfg.NumEnvs * cfg.StepsPerIter; steps != want || !(wall > 0) {
		t.Errorf("%d env steps in %v s, want %d", steps, wall, want)
	}
	if !(eff > 0 && eff <= 1.01) || env+policy+train > 101 {
		t.Errorf("shares %v%% %v%% %v%%, overlap efficiency %v: more than the wall time", env, policy, train, eff)
	}
}
