package train

import (
	"context"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// Every optimiser and initialisation lever resumes exactly: its state (RMSProp's mean squares;
// none for SGD) travels in the checkpoint, and an initialisation applies only to a new run.
func TestLeversResumeExactly(t *testing.T) {
	reg := registry.Default()
	for _, tc := range []struct {
		name string
		edit func(*config.Config)
	}{
		{"sgd", func(c *config.Config) { c.Optimizer, c.LearningRate = "sgd", 0.05 }},
		{"rmsprop", func(c *config.Config) { c.Optimizer, c.LearningRate = "rmsprop", 0.001 }},
		{"inits", func(c *config.Config) { c.LambdaInit, c.LogitInitScale, c.EmbedStd = config.LambdaInitAlpha, 0.1, 0.1 }},
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
