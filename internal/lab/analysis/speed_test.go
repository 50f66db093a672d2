package analysis

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const loopOutput = `pcl bench --env HalfCheetah-v5 [--grid 5] --measure 20, GOMAXPROCS=2, OPENBLAS_NUM_THREADS=1, 2 cores (AMD EPYC), load average 1.03 3.35 5.10 at the start; SB3 PPO over 20480 env steps, one torch thread

| grid | K | variant | env steps/s | × PPO | wall s per 1M env steps | env stepping | training | overlap efficiency | x max |
|---|---|---|---|---|---|---|---|---|---|
| 3^6 | 4 | plain | %s | %s | 675 | 45% | 53% | 0.98 | 1.89 |
| 3^6 | 4 | overlap | 2029 | 1.76 | 493 | 85% | 76% | 1.61 | 1.18 |
| 3^6 | – | SB3 PPO | 1153 | 1 | 867 | | | | |
| 5^6 | 4 | plain | 346 | 1.45 | 2890 | 9% | 87% | 0.97 | 1.15 |
| 5^6 | – | SB3 PPO | 238 | 1 | 4202 | | | | |
`

// The speed table has a column per bench-loop run with its env steps/s and ratio to PPO, PPO's own
// rows, each run's header, and the targets read off the plain K = 4 rows of every run.
func TestSpeedTable(t *testing.T) {
	root := t.TempDir()
	write := func(name, rate, x string) {
		t.Helper()
		out := strings.Replace(strings.Replace(loopOutput, "%s", rate, 1), "%s", x, 1)
		if err := os.WriteFile(filepath.Join(root, name), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a-1.md", "1481", "1.28")
	write("a-2.md", "2400", "2.08")
	spec := TableSpec{Name: "speed", File: "x.md", Kind: KindSpeed, Arms: []ArmSpec{{Label: "AMD EPYC", Runs: []string{"a-*.md"}}}}
	got, err := RenderTable(root, spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| grid | K | variant | AMD EPYC, run 1: env steps/s (× PPO) | AMD EPYC, run 2: env steps/s (× PPO) |",
		"| 3^6 | 4 | plain | 1,481 (1.28) | 2,400 (2.08) |",
		"| 3^6 | – | SB3 PPO | 1,153 | 1,153 |",
		"| 5^6 | 4 | plain | 346 (1.45) | 346 (1.45) |",
		"- AMD EPYC, run 1 (a-1.md): pcl bench --env HalfCheetah-v5",
		"3^6 at 2× or more: 1.28, 2.08, met in 1 of 2 runs; 5^6 at 0.5× or more: 1.45, 1.45, met in 2 of 2 runs.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the table lacks %q:\n%s", want, got)
		}
	}

	for name, tc := range map[string]struct{ content, want string }{
		"not bench-loop": {"hello\n", "not the output of scripts/bench-loop"},
		"bad rate":       {strings.Replace(strings.Replace(loopOutput, "%s", "fast", 1), "%s", "1", 1), `env steps/s "fast"`},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "b.md"), []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := RenderTable(dir, TableSpec{Name: "speed", Kind: KindSpeed, Arms: []ArmSpec{{Label: "m", Runs: []string{"b.md"}}}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}
