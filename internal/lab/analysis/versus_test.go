package analysis

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/runstore"
)

// writeForeignRun writes another program's run: result.json with the seed, and a metrics.csv of
// rows (env steps, wall seconds, return).
func writeForeignRun(t *testing.T, dir string, seed int, rows [][3]float64) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("iteration,env_steps,wall_seconds,mean_reward\n")
	for i, r := range rows {
		fmt.Fprintf(&b, "%d,%g,%g,%g\n", i+1, r[0], r[1], r[2])
	}
	for name, data := range map[string]string{"result.json": fmt.Sprintf(`{"algo": "other", "seed": %d}`, seed), runstore.MetricsFile: b.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The versus table reads each run whole and cut at the reference's wall time for its seed, by
// the last-20% rule, and another program's runs through result.json.
func TestVersusTable(t *testing.T) {
	root := t.TempDir()
	// The reference: a row a minute, returns 1, 2, ...; it ends at 10 minutes (seed 1, 10 rows)
	// and 5 (seed 2, 5 rows).
	ramp := func(n int, wallPerRow, offset float64) [][3]float64 {
		var rows [][3]float64
		for i := 1; i <= n; i++ {
			rows = append(rows, [3]float64{float64(100 * i), wallPerRow * float64(i), offset + float64(i)})
		}
		return rows
	}
	writeForeignRun(t, filepath.Join(root, "ref-s1"), 1, ramp(10, 60, 0))
	writeForeignRun(t, filepath.Join(root, "ref-s2"), 2, ramp(5, 60, 0))
	// The other arm: twice as slow, returns 100 higher.
	writeForeignRun(t, filepath.Join(root, "arm-s1"), 1, ramp(10, 120, 100))
	writeForeignRun(t, filepath.Join(root, "arm-s2"), 2, ramp(10, 120, 100))
	spec := TableSpec{Name: "v", File: "x.md", Kind: "versus", Arms: []ArmSpec{
		{Label: "ref", Runs: []string{"ref-s*"}}, {Label: "arm", Runs: []string{"arm-s*"}}}}
	got, err := RenderTable(root, spec)
	if err != nil {
		t.Fatal(err)
	}
	// ref: seed 1 last 20% of 10 rows = mean(9, 10) = 9.5; seed 2 = the last of 5 rows = 5.
	// arm whole: 109.5 both, in 20 minutes; cut at 10 minutes (seed 1) = 5 rows, last one 105;
	// cut at 5 (seed 2) = 2 rows, last one 102; env steps by then 500 and 200.
	for _, want := range []string{
		"| ref | 2 | 7 ± 3 (",
		"| 10, 5 | 5-10 | 7 ± 3 (",
		"| arm | 2 | 110 ± 0 (110 to 110) | 110, 110 | 20 | 104 ± 2 (",
		"| 200-500 |",
		// paired: 100 and 104.5 at the whole budget, 95.5 and 97 at the reference's wall time
		"| +102 (", "; +96 (",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if v := last20(until(mustCurve(t, filepath.Join(root, "arm-s2")).rows, 300)); v != 102 {
		t.Errorf("arm seed 2 at 5 minutes: %v, want 102", v)
	}

	for _, tc := range []struct {
		name, want string
		setup      func(dir string)
	}{
		{"no seed", "names no seed", func(dir string) { os.WriteFile(filepath.Join(dir, "result.json"), []byte(`{}`), 0o644) }},
		{"no column", `no column "wall_seconds"`, func(dir string) {
			os.WriteFile(filepath.Join(dir, "result.json"), []byte(`{"seed": 3}`), 0o644)
			os.WriteFile(filepath.Join(dir, runstore.MetricsFile), []byte("env_steps,mean_reward\n100,1\n"), 0o644)
		}},
		{"neither kind", "neither a pcl run", func(string) {}},
	} {
		dir := filepath.Join(t.TempDir(), "run")
		os.MkdirAll(dir, 0o755)
		tc.setup(dir)
		if _, err := readCurve(dir); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	// A seed the reference has not run is an error, not a silent row.
	writeForeignRun(t, filepath.Join(root, "arm-s3"), 3, ramp(3, 60, 0))
	if _, err := RenderTable(root, spec); err == nil || !strings.Contains(err.Error(), "seed 3") {
		t.Errorf("an arm's seed the reference lacks: %v", err)
	}
	if !math.IsNaN(last20(nil)) {
		t.Errorf("last20 of no rows should be NaN")
	}
}

func mustCurve(t *testing.T, dir string) curve {
	t.Helper()
	c, err := readCurve(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
