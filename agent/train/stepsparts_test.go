package train

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// pcl eval on a long-episode run prints the greedy returns and the logit gaps of the greedy
// states.
func TestEvaluateStepsPrintsGaps(t *testing.T) {
	cfg := config.Default()
	cfg.Env, cfg.Net, cfg.NumEnvs, cfg.StepsPerIter, cfg.SubEpisodes, cfg.MLPHidden = "CartPole-v1", config.NetMLP, 2, 10, 4, 8
	cfg.EvalEvery, cfg.Iters, cfg.CheckpointEvery = 0, 2, 2
	dir := t.TempDir()
	reg := registry.Default()
	if _, err := Run(context.Background(), cfg, Options{Dir: dir, Registry: reg, Engine: tensor.GonumEngine()}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := (mlpFamily{}).Evaluate(context.Background(), dir, EvalOptions{Registry: reg, Episodes: 2, Seed: 3}, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "greedy return") ||
		!strings.HasPrefix(lines[1], "greedy states: actions within 1 / 2 / 5 / 10 / 30 of the best logit, per state: ") ||
		!strings.Contains(lines[1], " of 2; gaps of the others: median ") {
		t.Errorf("output:\n%s", out.String())
	}
}
