package train

import (
	"path/filepath"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/runstore"
)

// Soft PCL's default over an action grid (the automatic weight with four steps per iteration, a
// lagged target and the trust region) passes pcl train's collapse check on every selection seed
// and every evaluation seed of issue 51, replayed over the committed runs, where the automatic
// weight alone, soft's default before, is flagged on seed 101: the check reads these runs apart.
func TestSoftGridDefaultPassesTheCollapseRule(t *testing.T) {
	runs := filepath.Join("..", "..", "docs", "results", "halfcheetah-replay", "runs")
	collapsed := func(name string) bool {
		t.Helper()
		d := runstore.Dir(filepath.Join(runs, name))
		cfg, err := d.Config()
		if err != nil {
			t.Fatal(err)
		}
		rows, err := d.Metrics()
		if err != nil {
			t.Fatal(err)
		}
		if name != "grid3-soft-default-s101" && (cfg.TrainSteps != 4 || cfg.TargetLag != 0.9 || cfg.TrustRegion != 0.01 || !cfg.AlphaAuto) {
			t.Fatalf("%s is not soft's grid default: train_steps %d, target_lag %v, trust_region %v, alpha_auto %v", name, cfg.TrainSteps, cfg.TargetLag, cfg.TrustRegion, cfg.AlphaAuto)
		}
		w, it, ok, err := CollapseOf(cfg, rows)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			t.Logf("%s: collapse at iteration %d: %+v", name, it, w)
		}
		return ok
	}
	for _, seed := range []string{"101", "102", "103", "1", "2", "3", "4", "5"} {
		if collapsed("grid3-soft-trust-s" + seed) {
			t.Errorf("soft's grid default, seed %s: flagged by the collapse check", seed)
		}
	}
	if !collapsed("grid3-soft-default-s101") {
		t.Errorf("the automatic weight alone, seed 101: not flagged; the check should read it as collapsed")
	}
}
