package train

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// trainedCartPole is a long-episode run of two iterations (2 copies of 10 steps each) on the Go
// CartPole, checkpointed at its end, and the registry it ran on.
func trainedCartPole(t *testing.T) (string, *envs.Registry) {
	t.Helper()
	cfg := config.Default()
	cfg.Env, cfg.Net, cfg.NumEnvs, cfg.StepsPerIter, cfg.SubEpisodes, cfg.MLPHidden = "CartPole-v1", config.NetMLP, 2, 10, 4, 8
	cfg.EvalEvery, cfg.Iters, cfg.CheckpointEvery = 0, 2, 2
	dir := t.TempDir()
	reg := registry.Default()
	if _, err := Run(context.Background(), cfg, Options{Dir: dir, Registry: reg, Engine: tensor.GonumEngine()}); err != nil {
		t.Fatal(err)
	}
	return dir, reg
}

// pcl eval on a long-episode run prints the greedy returns and the logit gaps of the greedy
// states.
func TestEvaluateStepsPrintsGaps(t *testing.T) {
	dir, reg := trainedCartPole(t)
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

// pcl eval --returns writes the returns it evaluated, one per episode, with the checkpoint they
// came from and the mean it printed; the same seed gives the same returns again.
func TestEvaluateWritesReturns(t *testing.T) {
	dir, reg := trainedCartPole(t)
	read := func(name string) (GreedyReturns, string) {
		t.Helper()
		path := filepath.Join(t.TempDir(), name)
		var out bytes.Buffer
		if err := (mlpFamily{}).Evaluate(context.Background(), dir, EvalOptions{Registry: reg, Episodes: 3, Seed: 7, Returns: path}, &out); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var res GreedyReturns
		if err := json.Unmarshal(data, &res); err != nil {
			t.Fatalf("%s: %v\n%s", path, err, data)
		}
		return res, out.String()
	}
	res, printed := read("a.json")
	if res.Run != dir || res.Iteration != 2 || res.EnvSteps != 40 || res.Seed != 7 || len(res.Returns) != 3 {
		t.Fatalf("returns %+v: want run %s at iteration 2 (40 env steps: 2 copies of 10), seed 7, 3 returns", res, dir)
	}
	sum := 0.0
	for _, r := range res.Returns {
		sum += r
	}
	if math.Abs(sum/3-res.Mean) > 1e-9 || !strings.Contains(printed, fmt.Sprintf("greedy return %.1f ± %.1f over 3 episodes", res.Mean, res.Std)) {
		t.Errorf("mean %v of %v, printed:\n%s", res.Mean, res.Returns, printed)
	}
	if again, _ := read("b.json"); !slices.Equal(again.Returns, res.Returns) {
		t.Errorf("the same seed gave %v, then %v", res.Returns, again.Returns)
	}
}
