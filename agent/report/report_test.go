package report

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/train"
)

// writeRun writes a run directory with n rows whose return is ret(i) (NaN before the first
// completed episode) and max-probability 0.5.
func writeRun(t *testing.T, dir, algo string, seed int64, n int, ret func(i int) float64) {
	t.Helper()
	c := config.Default()
	c.Env, c.Net, c.Grid, c.Algo, c.Seed = "HalfCheetah-v5", config.NetMLP, 3, algo, seed
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteFile(filepath.Join(dir, train.ConfigFile)); err != nil {
		t.Fatal(err)
	}
	var rows []train.Row
	for i := range n {
		g := math.NaN()
		if i%5 == 0 {
			g = float64(i)
		}
		rows = append(rows, train.Row{Iteration: i, EnvSteps: int64(100 * (i + 1)), WallSeconds: float64(i), MeanReward: ret(i),
			GreedyReward: g, MaxProb: 0.5, Support: 3, Loss: 1, ReplayLoss: 1})
	}
	f, err := os.Create(filepath.Join(dir, train.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := train.WriteMetrics(f, rows); err != nil {
		t.Fatal(err)
	}
}

func TestReportFiguresAndTable(t *testing.T) {
	root := t.TempDir()
	ramp := func(i int) float64 {
		if i < 10 {
			return math.NaN()
		}
		return float64(i)
	}
	writeRun(t, filepath.Join(root, "a"), config.AlgoSparse, 1, 40, ramp)
	writeRun(t, filepath.Join(root, "b"), config.AlgoSparse, 2, 40, func(i int) float64 { return ramp(i) + 2 })
	writeRun(t, filepath.Join(root, "c"), config.AlgoSoft, 1, 20, ramp) // unfinished: fewer rows
	runs, err := Load([]string{filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c")})
	if err != nil {
		t.Fatal(err)
	}
	s := Summarise(runs[0])
	// The last tenth of 40 rows is rows 36..39: mean return 37.5.
	if s.FinalReturn != 37.5 || s.LastGreedy != 35 || s.BestGreedy != 35 || s.EnvSteps != 4000 || s.FinalMaxProb != 0.5 {
		t.Errorf("summary %+v", s)
	}
	files, err := Figures(root, runs)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("figures %v, want a return and a max-prob figure", files)
	}
	for _, f := range files {
		if st, err := os.Stat(filepath.Join(root, f)); err != nil || st.Size() == 0 {
			t.Errorf("figure %s: %v", f, err)
		}
	}
	md := Table(runs)
	for _, want := range []string{"| HalfCheetah-v5 | 3 | sparse | 0.05 | 0.005 | 2 | 38.50 ± 1.00 |", "| HalfCheetah-v5 | 3 | soft | 0.05 | 0.005 | 1 | 18.50 ± 0.00 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
	if _, err := Load([]string{filepath.Join(root, "missing")}); err == nil {
		t.Error("a missing run: no error")
	}
}
