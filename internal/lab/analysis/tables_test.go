package analysis

import (
	"math"
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
