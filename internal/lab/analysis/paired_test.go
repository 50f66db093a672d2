package analysis

import (
	"math"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
)

func TestSampleInterval(t *testing.T) {
	for _, tc := range []struct {
		name            string
		x               []float64
		mean, std, half float64
	}{
		// The default's last-20% returns on seeds 1-5 (docs/results/auto-weight): the README's
		// ± 167 is the population std, the sample std is 187.
		{"five seeds", []float64{1254.7, 1066.8, 776.2, 1203.4, 1115.6}, 1083.34, 186.70, 2.7764451 * 186.70 / math.Sqrt(5)},
		{"two values", []float64{1, 3}, 2, math.Sqrt2, 12.7062047 * 1},
	} {
		iv := SampleInterval(tc.x)
		if math.Abs(iv.Mean-tc.mean) > 0.01 || math.Abs(iv.Std-tc.std) > 0.01 || math.Abs(iv.HalfWidth-tc.half) > 0.01 {
			t.Errorf("%s: %+v, want mean %v std %v half-width %v", tc.name, iv, tc.mean, tc.std, tc.half)
		}
		if math.Abs(iv.Lower-(iv.Mean-iv.HalfWidth)) > 1e-9 || math.Abs(iv.Upper-(iv.Mean+iv.HalfWidth)) > 1e-9 {
			t.Errorf("%s: bounds %v, %v around %v ± %v", tc.name, iv.Lower, iv.Upper, iv.Mean, iv.HalfWidth)
		}
	}
	if iv := SampleInterval([]float64{5}); iv.Mean != 5 || !math.IsNaN(iv.Std) || !math.IsNaN(iv.Lower) {
		t.Errorf("one value: %+v, want mean 5 and no spread", iv)
	}
}

func TestPassThreshold(t *testing.T) {
	var rows []runstore.Row
	for i := range 100 {
		r := float64(i * 20) // 0, 20, ..., a moving mean over 20 reaches 1423 at i = 81 (mean of 62..81 = 71.5*20 = 1430)
		if i == 50 {
			r = math.NaN() // no episode ended: skipped
		}
		rows = append(rows, runstore.Row{Iteration: i + 1, EnvSteps: int64(i+1) * 100, WallSeconds: float64(i + 1), MeanReward: r})
	}
	steps, wall, ok := PassThreshold(rows, 1423, 20)
	if !ok || steps != 8200 || wall != 82 {
		t.Errorf("passes at %d steps, %v s (%v), want 8200 and 82", steps, wall, ok)
	}
	if _, _, ok := PassThreshold(rows[:60], 1423, 20); ok {
		t.Error("a run that never reaches the threshold passed")
	}
}

func TestPairedSection(t *testing.T) {
	record := func(name string, seed int64, steps int, level float64) Record {
		cfg := config.Default()
		cfg.Env, cfg.Grid, cfg.Seed = "HalfCheetah-v5", 3, seed
		if strings.HasPrefix(name, "cand") {
			cfg.TrainSteps = 4
		}
		var rows []runstore.Row
		for i := range 10 {
			rows = append(rows, runstore.Row{Iteration: i + 1, EnvSteps: int64(i+1) * 100, WallSeconds: float64(i + 1), MeanReward: level})
		}
		return Record{Dir: "runs/" + name, Cfg: cfg, Rows: rows}
	}
	runs := []Record{
		record("base-s1", 1, 10, 1000), record("base-s2", 2, 10, 900), record("base-s3", 3, 10, 1100),
		record("cand-s1", 1, 10, 1500), record("cand-s2", 2, 10, 1450), record("cand-s3", 3, 10, 1700),
	}
	md := PairedSection(runs, func(r Record) bool { return strings.Contains(r.Dir, "base") })
	for _, want := range []string{"sparse α 0.05: train_steps 4", "| 1 | 1000 | 1500 | +500 |", "| 2 | 900 | 1450 | +550 |", "| 3 | 1100 | 1700 | +600 |",
		"550 ± 50 (95%: [426, 674])", "Better in 3 of 3 seeds; **a win**", "`base-s1`, `base-s2`, `base-s3`"} {
		if !strings.Contains(md, want) {
			t.Errorf("paired section lacks %q:\n%s", want, md)
		}
	}
	// The other way round it is no win.
	md = PairedSection(runs, func(r Record) bool { return strings.Contains(r.Dir, "cand") })
	if !strings.Contains(md, "Better in 0 of 3 seeds; no win") {
		t.Errorf("reversed comparison:\n%s", md)
	}
	if md := PairedSection(runs, func(Record) bool { return false }); md != "" {
		t.Errorf("no baseline: %q", md)
	}
}
