package goldens

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Table groups the committed runs by results folder, binary and covering golden, and says per
// group whether today's code reproduces them (the golden's verification for that binary) and how
// to re-run one: by rebuilding a clean stamped commit, with --here otherwise.
func TestTable(t *testing.T) {
	const x, y = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	root := t.TempDir()
	run := func(path, session string) {
		t.Helper()
		dir := filepath.Join(root, filepath.FromSlash(path))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range map[string]string{"config.json": "{}", "metrics.csv": "iteration\n0\n", "run.json": `{"sessions": [` + session + `]}`} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	stamped := func(c string, dirty bool) string {
		d := "false"
		if dirty {
			d = "true"
		}
		return `{"binary_commit": "` + c + `", "binary_dirty": ` + d + `}`
	}
	run("docs/results/a/runs/default-s1", stamped(x, false))
	run("docs/results/a/runs/default-s2", stamped(x, false))
	run("docs/results/a/runs/default-s3", stamped(y, false))
	run("docs/results/a/runs/other-s1", stamped(x, false))
	run("docs/results/b/soak", `{"commit": "`+y+`", "dirty": true, "commit_source": "git /w"}`)
	run("docs/results/b/dirty", stamped(y, true))
	gs := []Golden{{Name: "g", Args: []string{"--env", "E"}, Pins: "the default", Covers: []string{"docs/results/a/runs/default-s*"},
		Verified: []Verification{
			{Commit: x, Run: "docs/results/a/runs/default-s1", Iters: 30, Result: "identical for 30 iterations"},
			{Commit: y, Run: "docs/results/a/runs/default-s3", Iters: 30, Result: "the runs part at iteration 4, column loss: recorded 1, reproduced 2"},
		}}}
	table, err := Table(root, gs)
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(table, "\n")
	for i, want := range []string{
		"| a | 1 | 1111111 | none | not known: no golden covers their config | `bin/pcl reproduce --run docs/results/a/runs/other-s1 --iters 30` |",
		"| a | 2 | 1111111 | g | **yes** (default-s1: 30 iterations identical) | `bin/pcl reproduce --run docs/results/a/runs/default-s1 --iters 30` |",
		"| a | 1 | 2222222 | g | no (default-s3: parts at iteration 4, column loss) | `bin/pcl reproduce --run docs/results/a/runs/default-s3 --iters 30` |",
		"| b | 1 | unstamped | none | not known: no golden covers their config | `bin/pcl reproduce --here --run docs/results/b/soak --iters 30` (no commit to rebuild: across versions) |",
		"| b | 1 | 2222222 (modified tree) | none | not known: no golden covers their config | `bin/pcl reproduce --here --run docs/results/b/dirty --iters 30` (no commit to rebuild: across versions) |",
	} {
		if len(rows) < i+3 || rows[i+2] != want {
			t.Errorf("row %d:\n got  %s\n want %s\ntable:\n%s", i, rows[min(i+2, len(rows)-1)], want, table)
		}
	}
}
