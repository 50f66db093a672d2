package runplot

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/train"
)

// Each axis draws the reward, max-prob and support figures; value.png appears only when the rows
// measure both V and the discounted return, and no rows draw nothing.
func TestDraw(t *testing.T) {
	nan := math.NaN()
	row := func(i int, v float64) runstore.Row {
		r := runstore.Row{Iteration: i, EnvSteps: int64(100 * i), MeanReward: float64(i), GreedyReward: nan, Support: 3, MaxProb: 0.5,
			Diagnostics: runstore.NoDiagnostics()}
		if i%2 == 0 {
			r.GreedyReward = float64(2 * i)
		}
		r.ValueMean, r.ReturnDiscounted = v, v
		return r
	}
	tests := []struct {
		name  string
		axis  Axis
		rows  []runstore.Row
		files map[string]bool
	}{
		{"iterations", Iterations, []runstore.Row{row(0, nan), row(1, nan), row(2, nan)},
			map[string]bool{RewardPlot: true, MaxProbPlot: true, SparsityPlot: true, ValuePlot: false}},
		{"env steps with V", EnvSteps, []runstore.Row{row(0, nan), row(1, -3), row(2, -4)},
			map[string]bool{RewardPlot: true, MaxProbPlot: true, SparsityPlot: true, ValuePlot: true}},
		{"no rows", EnvSteps, nil,
			map[string]bool{RewardPlot: false, MaxProbPlot: false, SparsityPlot: false, ValuePlot: false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := config.Default()
			if err := Draw(dir, cfg, 20, tc.rows, tc.axis); err != nil {
				t.Fatal(err)
			}
			for f, want := range tc.files {
				st, err := os.Stat(filepath.Join(dir, f))
				if got := err == nil && st.Size() > 0; got != want {
					t.Errorf("%s drawn: %v, want %v", f, got, want)
				}
			}
		})
	}
}

// Run, as train.Options.Plot, draws a long-episode run against its env steps, V included.
func TestRunAsTrainPlot(t *testing.T) {
	dir := t.TempDir()
	rows := []runstore.Row{{Iteration: 0, EnvSteps: 100, MeanReward: 1, GreedyReward: 2, Support: 2, MaxProb: 0.5, Diagnostics: runstore.NoDiagnostics()}}
	rows[0].ValueMean, rows[0].ReturnDiscounted = 3, 4
	if err := Run(train.RunPlots{Dir: dir, Config: config.Default(), Actions: 2, Rows: rows, EnvSteps: true}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{RewardPlot, MaxProbPlot, SparsityPlot, ValuePlot} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not drawn: %v", f, err)
		}
	}
}
