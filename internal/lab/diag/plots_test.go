package diag

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
)

func TestPanelsNameTheProbedRun(t *testing.T) {
	tab := Table{"iteration": {0, 5, 10}, "mean_reward": {0, 1, 2}, "support": {4, 3, 2}, "max_prob": {0.3, 0.5, 0.9}}
	cfg := config.Default()
	cfg.Env, cfg.Base, cfg.Algo, cfg.Alpha, cfg.Seed = "Copy-v0", 5, config.AlgoSparse, 0.05, 1
	withCfg := t.TempDir()
	if err := cfg.WriteFile(filepath.Join(withCfg, "config.json")); err != nil {
		t.Fatal(err)
	}
	run, err := probeRun(withCfg)
	if err != nil || run != "Copy-v0 |A| = 20 (base 5), sparse α = 0.05, seed 1" {
		t.Errorf("probeRun = %q, %v", run, err)
	}
	if err := Panels(withCfg, tab); err != nil {
		t.Fatal(err)
	}
	// Without config.json the panels are drawn with their measure titles only.
	bare := t.TempDir()
	if err := Panels(bare, tab); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(bare, "support.png")); err != nil {
		t.Error(err)
	}
	// A config.json that cannot be read is an error, not a silently untitled figure.
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "config.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Panels(broken, tab); err == nil || !strings.Contains(err.Error(), "config.json") {
		t.Errorf("broken config.json: error %v", err)
	}
}
