package train

import (
	"context"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// Every optimiser, initialisation and exploration lever resumes exactly: its state (RMSProp's mean
// squares; none for SGD) travels in the checkpoint, an initialisation applies only to a new run,
// and exploration draws from the iteration's own stream.
func TestLeversResumeExactly(t *testing.T) {
	reg := registry.Default()
	for _, tc := range []struct {
		name string
		edit func(*config.Config)
	}{
		{"sgd", func(c *config.Config) { c.Optimizer, c.LearningRate = "sgd", 0.05 }},
		{"rmsprop", func(c *config.Config) { c.Optimizer, c.LearningRate = "rmsprop", 0.001 }},
		{"inits", func(c *config.Config) { c.LambdaInit, c.LogitInitScale, c.EmbedStd = config.LambdaInitAlpha, 0.1, 0.1 }},
		{"explore", func(c *config.Config) { c.Explore, c.ExploreShare = 0.2, 0.5 }},
		{"explore-temp", func(c *config.Config) { c.Explore, c.ExploreShare, c.ExploreTemp = 0.2, 0.5, 2 }},
		{"advantage", func(c *config.Config) { c.ReplayPriority, c.ReplayAlpha = config.PriorityAdvantage, 2 }},
	} {
		cfg := resumeConfig()
		cfg.Iters = 20
		tc.edit(&cfg)
		full, err := Run(context.Background(), cfg, Options{Dir: t.TempDir(), Registry: reg, Engine: tensor.GonumEngine()})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		half := cfg
		half.Iters = 10
		dir := t.TempDir()
		if _, err := Run(context.Background(), half, Options{Dir: dir, Registry: reg, Engine: tensor.GonumEngine()}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		resumed, err := Run(context.Background(), cfg, Options{Dir: dir, Resume: true, Registry: reg, Engine: tensor.GonumEngine()})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		sameRows(t, tc.name, full.Rows, resumed.Rows)
	}
}

// Exploration changes the sampled batches of both families (a run with it differs from one
// without): the one collector explores in whole episodes and in sub-episodes alike.
func TestExploreChangesTheBatches(t *testing.T) {
	reg := registry.Default()
	for _, tc := range []struct {
		name string
		cfg  config.Config
	}{{"lstm", resumeConfig()}, {"mlp", smallStepsConfig()}} {
		t.Run(tc.name, func(t *testing.T) { checkExploreChanges(t, tc.cfg, reg) })
	}
}

func checkExploreChanges(t *testing.T, base config.Config, reg *envs.Registry) {
	run := func(explore float64) []runstore.Row {
		cfg := base
		cfg.Iters, cfg.Explore = 5, explore
		sum, err := Run(context.Background(), cfg, Options{Dir: t.TempDir(), Registry: reg, Engine: tensor.GonumEngine()})
		if err != nil {
			t.Fatalf("explore %v: %v", explore, err)
		}
		return sum.Rows
	}
	plain, exploring := run(0), run(0.5)
	same := true
	for i := range plain {
		same = same && plain[i].MeanReward == exploring[i].MeanReward && plain[i].Loss == exploring[i].Loss
	}
	if same {
		t.Error("explore 0.5 gave the same rewards and losses as no exploration")
	}
}
