package train

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/nn/checkpoint"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

func quickRun(t *testing.T, dir string, cfg config.Config, resume bool) (Summary, error) {
	t.Helper()
	return Run(context.Background(), cfg, Options{Dir: dir, Resume: resume, Registry: registry.Default(), Engine: tensor.GonumEngine(), Logger: quietLogger()})
}

// snapshot reads every file of dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func sameFiles(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	if len(before) != len(after) {
		t.Errorf("%s: %d files before, %d after", what, len(before), len(after))
	}
	for name, b := range before {
		if after[name] != b {
			t.Errorf("%s: %s changed", what, name)
		}
	}
}

// Non-finite numbers are refused by name before anything is written.
func TestNonFiniteConfigIsRefusedBeforeTheRunDir(t *testing.T) {
	cases := []struct {
		field string
		edit  func(*config.Config)
	}{
		{"alpha", func(c *config.Config) { c.Alpha = math.Inf(1) }},
		{"learning_rate", func(c *config.Config) { c.LearningRate = math.Inf(1) }},
		{"reward_threshold", func(c *config.Config) { c.RewardThreshold = math.NaN() }},
		{"recency_weight", func(c *config.Config) { c.RecencyWeight = math.NaN() }},
		{"max_loss", func(c *config.Config) { c.MaxLoss = -1 }},
	}
	for _, tc := range cases {
		cfg := smallCopyConfig(config.AlgoSparse, 0.05)
		tc.edit(&cfg)
		dir := filepath.Join(t.TempDir(), "run")
		_, err := quickRun(t, dir, cfg, false)
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: error %v, want one naming the field", tc.field, err)
		}
		if _, serr := os.Stat(dir); serr == nil {
			t.Errorf("%s: a run dir was created", tc.field)
		}
	}
}

// A resume that fails (a damaged replay file, checkpoint metadata out of range, with no fallback
// checkpoint to resume from instead; or metrics that do not match the checkpoint) changes no file.
func TestFailedResumeChangesNothing(t *testing.T) {
	cfg := smallCopyConfig(config.AlgoSparse, 0.05)
	cfg.Iters, cfg.CheckpointEvery, cfg.StopAtThreshold = 3, 1, false
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   string
	}{
		{"truncated replay", func(t *testing.T, dir string) {
			meta, err := runstore.Dir(dir).Meta()
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(filepath.Join(dir, meta.ReplayFile), 10); err != nil {
				t.Fatal(err)
			}
			removeFallback(t, dir)
		}, "replay"},
		{"negative iteration in valid metadata", func(t *testing.T, dir string) { rewriteIteration(t, dir, -3); removeFallback(t, dir) }, "claims -3 iterations"},
		{"iteration beyond the metrics", func(t *testing.T, dir string) { rewriteIteration(t, dir, 50) }, "claims 50 iterations"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := quickRun(t, dir, cfg, false); err != nil {
				t.Fatal(err)
			}
			tc.damage(t, dir)
			before := snapshot(t, dir)
			more := cfg
			more.Iters = 6
			_, err := quickRun(t, dir, more, true)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			sameFiles(t, tc.name, before, snapshot(t, dir))
		})
	}
}

// removeFallback deletes dir's fallback checkpoint.
func removeFallback(t *testing.T, dir string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, runstore.FallbackFile)); err != nil {
		t.Fatal(err)
	}
}

// rewriteIteration re-saves dir's checkpoint (valid checksum) with its iteration set to it.
func rewriteIteration(t *testing.T, dir string, it int) {
	t.Helper()
	f, err := checkpoint.Load(filepath.Join(dir, runstore.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal(f.Meta, &meta); err != nil {
		t.Fatal(err)
	}
	meta["iteration"] = it
	b, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	params := make([]*nn.Param, len(f.Tensors))
	for i, tt := range f.Tensors {
		params[i] = &nn.Param{Name: tt.Name, Value: tt.Value}
	}
	data, err := checkpoint.Encode(params, b)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, runstore.CheckpointFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A loss above --max-loss stops the run like a NaN would: an error naming the ceiling, and the last
// good checkpoint untouched.
func TestDivergenceGuardStopsTheRun(t *testing.T) {
	cfg := smallCopyConfig(config.AlgoSparse, 0.05)
	cfg.Iters, cfg.CheckpointEvery, cfg.StopAtThreshold = 2, 1, false
	dir := t.TempDir()
	if _, err := quickRun(t, dir, cfg, false); err != nil {
		t.Fatal(err)
	}
	saved, err := config.ReadFile(filepath.Join(dir, runstore.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	saved.MaxLoss = 1e-12
	if err := saved.WriteFile(filepath.Join(dir, runstore.ConfigFile)); err != nil {
		t.Fatal(err)
	}
	ckpt, err := os.ReadFile(filepath.Join(dir, runstore.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Iters = 4
	_, err = quickRun(t, dir, cfg, true)
	if !errors.Is(err, ErrDiverged) || !strings.Contains(err.Error(), "last good checkpoint (iteration 2)") {
		t.Fatalf("error %v, want ErrDiverged naming the checkpoint of iteration 2", err)
	}
	after, err := os.ReadFile(filepath.Join(dir, runstore.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(ckpt) {
		t.Error("the checkpoint changed")
	}
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
