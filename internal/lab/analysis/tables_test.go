package analysis

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
)

func TestThousands(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{{0, "0"}, {999.4, "999"}, {1083.2, "1,083"}, {-100.4, "−100"}, {15625, "15,625"}, {1234567, "1,234,567"}, {-0.4, "0"}, {math.NaN(), "-"}} {
		if got := thousands(tc.x); got != tc.want {
			t.Errorf("thousands(%v) = %q, want %q", tc.x, got, tc.want)
		}
	}
	if signed(2196) != "+2,196" || signed(-293) != "−293" {
		t.Errorf("signed: %q %q", signed(2196), signed(-293))
	}
}

func TestReplaceTable(t *testing.T) {
	doc := "intro\n<!-- results:a -->\nold\nrows\n<!-- /results -->\nafter\n"
	got, err := ReplaceTable(doc, "a", "| new |\n")
	if err != nil || got != "intro\n<!-- results:a -->\n| new |\n<!-- /results -->\nafter\n" {
		t.Fatalf("got %q, %v", got, err)
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"no marker", "text\n", "not in the file once"},
		{"marker twice", "<!-- results:a -->\n<!-- /results -->\n<!-- results:a -->\n<!-- /results -->\n", "not in the file once"},
		{"no end", "<!-- results:a -->\nrows\n", "has no"},
	} {
		if _, err := ReplaceTable(tc.doc, "a", "x\n"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}

// A levers table reads each run as it stood at the screen's budget: a longer reference run
// counts only its first Steps env steps, and a run short of them is an error.
func TestLeversTableAtTheScreensBudget(t *testing.T) {
	root := t.TempDir()
	// Rows every 100 steps, a second apart (row 99 at 10,000 steps and 99 s: 165 min per 1M);
	// the return is the row index.
	writeRun(t, filepath.Join(root, "ref"), config.AlgoSparse, 101, 200, func(i int) float64 { return float64(i) })
	writeRun(t, filepath.Join(root, "lever"), config.AlgoSparse, 101, 100, func(i int) float64 { return 2 * float64(i) })
	spec := TableSpec{Name: "l", File: "x.md", Kind: "levers", Steps: 10_000, Arms: []ArmSpec{
		{Label: "reference", Runs: []string{"ref"}}, {Label: "lever", Runs: []string{"lever"}}}}
	got, err := RenderTable(root, spec)
	if err != nil {
		t.Fatal(err)
	}
	// The last 20 of the first 100 rows: mean(80..99) = 89.5 (the whole reference would give 179.5).
	for _, want := range []string{"| reference | 1 | 90 | 0.50 | 3.0 | 165 |", "| lever | 1 | 179 | 0.50 | 3.0 | 165 |"} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	spec.Steps = 20_001
	if _, err := RenderTable(root, spec); err == nil || !strings.Contains(err.Error(), "has not reached 20001 env steps") {
		t.Errorf("a run short of the budget: %v", err)
	}
}

// A paired table of the final greedy return reads each run's final-greedy-STEPS.json, pairs the
// seeds and says what it compares; a run without the file, or with one at other env steps, is an
// error naming it, and the metric is checked when the spec is read.
func TestPairedFinalGreedy(t *testing.T) {
	root := t.TempDir()
	flat := func(int) float64 { return 1 }
	greedy := map[string]float64{"sparse-s1": 3000, "sparse-s2": 2000, "soft-s1": 2500, "soft-s2": 2600}
	for name, mean := range greedy {
		dir := filepath.Join(root, "runs", name)
		algo, seed := config.AlgoSparse, int64(name[len(name)-1]-'0')
		if strings.HasPrefix(name, "soft") {
			algo = config.AlgoSoft
		}
		writeRun(t, dir, algo, seed, 30, flat)
		data, err := json.Marshal(map[string]any{"env_steps": 2000, "returns": []float64{mean - 1, mean + 1}, "mean": mean})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "final-greedy-2000.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec := TableSpec{Name: "g", File: "x.md", Kind: "paired", Steps: 2000, Metric: MetricFinalGreedy,
		Baseline: &ArmSpec{Label: "soft", Runs: []string{"runs/soft-s*"}},
		Arms:     []ArmSpec{{Label: "sparse", Runs: []string{"runs/sparse-s*"}}}}
	got, err := RenderTable(root, spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| 1 | 2,500 | 3,000 | +500 |",
		"| 2 | 2,600 | 2,000 | −600 |",
		"| mean ± std (95%) | 2,550 ± 71 (1,915 to 3,185) | 2,500 ± 707 (−3,853 to 8,853) | −50 ± 778 (−7,038 to 6,938) |",
		"The final greedy return, seed by seed: the mean return of final-greedy-2000.json's deterministic episodes of the checkpoint at 2,000 env steps",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the table lacks %q:\n%s", want, got)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "runs", "soft-s2", "final-greedy-2000.json"), []byte(`{"env_steps": 1000, "returns": [1], "mean": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := RenderTable(root, spec); err == nil || !strings.Contains(err.Error(), "at 1000 env steps, want some at 2000") {
		t.Errorf("a file at other env steps: %v", err)
	}
	if err := os.Remove(filepath.Join(root, "runs", "soft-s2", "final-greedy-2000.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := RenderTable(root, spec); err == nil || !strings.Contains(err.Error(), filepath.Join("soft-s2", "final-greedy-2000.json")) {
		t.Errorf("a missing file: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*TableSpec)
		want string
	}{
		{"no steps", func(s *TableSpec) { s.Steps = 0 }, "needs steps"},
		{"unknown metric", func(s *TableSpec) { s.Metric = "median" }, `metric "median" is not`},
		{"not paired", func(s *TableSpec) { s.Kind, s.Baseline = "summary", nil }, "only a paired table chooses its metric"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := spec
			tc.edit(&s)
			if err := readSpecError(t, s); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadTableSpecs: %v, want an error with %q", err, tc.want)
			}
		})
	}
}
