package train

import (
	"context"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

func smallStepsConfig() config.Config {
	cfg := config.Default()
	cfg.Env, cfg.Net, cfg.NumEnvs, cfg.StepsPerIter, cfg.SubEpisodes, cfg.MLPHidden = "CartPole-v1", config.NetMLP, 2, 10, 4, 8
	cfg.EvalEvery, cfg.EvalEpisodes, cfg.Iters, cfg.CheckpointEvery, cfg.Gamma = 2, 1, 8, 4, 0.99
	return cfg
}

// A long-episode run's metrics carry the diagnostics (once episodes have ended, V against the
// discounted return; the clip factor; the policy/value split of the gradient norm), row 0's greedy
// evaluation plays the initialised networks, and every checkpoint logs the memory.
func TestStepsRunDiagnostics(t *testing.T) {
	cfg := smallStepsConfig()
	dir := t.TempDir()
	reg := registry.Default()
	var plotted RunPlots
	plot := func(p RunPlots) error { plotted = p; return nil }
	opts := Options{Dir: dir, Registry: reg, Engine: tensor.GonumEngine(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Plot: plot}
	if _, err := Run(context.Background(), cfg, opts); err != nil {
		t.Fatal(err)
	}
	rows, err := runstore.ReadMetrics(filepath.Join(dir, runstore.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	known := 0
	for _, r := range rows {
		if !(r.ClipScale > 0 && r.ClipScale <= 1) {
			t.Errorf("iteration %d: clip_scale %v", r.Iteration, r.ClipScale)
		}
		if d := math.Hypot(r.GradNormPolicy, r.GradNormValue) - r.GradNorm; math.Abs(d) > 1e-6*r.GradNorm {
			t.Errorf("iteration %d: grad norms %v and %v do not make up %v", r.Iteration, r.GradNormPolicy, r.GradNormValue, r.GradNorm)
		}
		if r.ClipScale < 1 && math.Abs(r.ClipScale*r.GradNorm-cfg.ClipNorm) > 1e-9*r.GradNorm {
			t.Errorf("iteration %d: clip_scale %v of norm %v does not make the clip %v", r.Iteration, r.ClipScale, r.GradNorm, cfg.ClipNorm)
		}
		if !math.IsNaN(r.ReturnDiscounted) {
			known++
			if math.IsNaN(r.ValueMean) || r.ReturnDiscounted <= 0 {
				t.Errorf("iteration %d: V %v against the discounted return %v (CartPole's rewards are +1)", r.Iteration, r.ValueMean, r.ReturnDiscounted)
			}
		}
	}
	if known == 0 {
		t.Error("no row has a discounted return, though CartPole episodes end within a few iterations")
	}
	if !plotted.EnvSteps || len(plotted.Rows) != len(rows) {
		t.Errorf("Plot drew %d rows against env steps %v; want %d against env steps", len(plotted.Rows), plotted.EnvSteps, len(rows))
	}

	// Row 0's greedy return is the initialised networks' greedy return.
	r, err := newStepsRun(context.Background(), cfg, RegistryEnvs{Registry: reg}, tensor.GonumEngine(), cfg.EvalEpisodes)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	returns, err := r.greedyReturns(context.Background(), iterSeed(cfg.Seed, 0, 5), nil)
	if err != nil {
		t.Fatal(err)
	}
	if g := mean(returns); rows[0].GreedyReward != g {
		t.Errorf("row 0 greedy %v, the initialised networks play %v", rows[0].GreedyReward, g)
	}

	mem, err := os.ReadFile(filepath.Join(dir, runstore.MemoryLogFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(mem)), "\n")
	if len(lines) != 1+cfg.Iters/cfg.CheckpointEvery || !strings.HasPrefix(lines[0], "iteration,env_steps,go_rss_mib") || !strings.HasPrefix(lines[1], "4,") {
		t.Errorf("memory.csv:\n%s", mem)
	}
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
