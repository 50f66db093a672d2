package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/internal/lab/analysis"
	"github.com/sparsepcl/sparsepcl/internal/lab/evaluation"
	"github.com/sparsepcl/sparsepcl/internal/lab/goldens"
)

// The committed result tables match their runs, and a changed digit inside one is caught and
// named, as is a provenance table that no longer follows the goldens' verifications: pcl tables --check over a copy of the repository's spec and markdown files that reads
// the committed runs.
func TestTablesCheckCatchesAChangedDigit(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(repo, "docs", "results"), filepath.Join(root, "docs", "results")); err != nil {
		t.Fatal(err)
	}
	specs, err := analysis.ReadTableSpecs(filepath.Join(repo, "docs", "results", "tables.json"), evaluation.TableKinds())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{}
	for _, s := range specs {
		files[s.File] = true
	}
	for f := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(repo, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	manifest := filepath.Join(root, goldens.DefaultPath)
	if err := os.MkdirAll(filepath.Dir(manifest), 0o755); err != nil {
		t.Fatal(err)
	}
	gs, err := goldens.Read(filepath.Join(repo, goldens.DefaultPath))
	if err != nil {
		t.Fatal(err)
	}
	if err := goldens.Write(manifest, gs); err != nil {
		t.Fatal(err)
	}
	check := func() (int, string) {
		var o, e bytes.Buffer
		code := runMain(context.Background(), []string{"tables", "--check", "--root", root}, &o, &e)
		return code, o.String() + e.String()
	}
	if code, out := check(); code != exitOK {
		t.Fatalf("the committed tables: exit %d: %s", code, out)
	}
	results := filepath.Join(root, "docs", "results.md")
	data, _ := os.ReadFile(results)
	doc := string(data)
	i := strings.Index(doc, "<!-- results:halfcheetah-paper -->")
	j := strings.Index(doc[i:], "1,083") // the default's mean return at 3^6
	if i < 0 || j < 0 {
		t.Fatal("docs/results.md has no halfcheetah-paper table with the default's 1,083")
	}
	changed := doc[:i+j] + "1,084" + doc[i+j+len("1,083"):]
	if err := os.WriteFile(results, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := check(); code != exitFailure || !strings.Contains(out, "halfcheetah-paper in docs/results.md") {
		t.Fatalf("a changed digit: exit %d, want %d naming the table: %s", code, exitFailure, out)
	}
	// The provenance table (docs/results/REPRODUCE.md) follows the goldens' verifications: one
	// that turns out different makes the committed table stale.
	for i, g := range gs {
		for j, v := range g.Verified {
			if v.Identical() {
				gs[i].Verified[j].Result = "the runs part at iteration 7, column loss: recorded 1, reproduced 2"
			}
		}
	}
	if err := goldens.Write(manifest, gs); err != nil {
		t.Fatal(err)
	}
	if code, out := check(); code != exitFailure || !strings.Contains(out, "provenance in docs/results/REPRODUCE.md") {
		t.Fatalf("a changed verification: exit %d, want %d naming the provenance table: %s", code, exitFailure, out)
	}
}

// pcl tables draws a panels figure into its PNG and links it from its markdown; --check passes on
// what it wrote and names the figure once the PNG differs from the runs.
func TestTablesWritesAndChecksFigures(t *testing.T) {
	root := t.TempDir()
	for _, algo := range []config.Algo{config.AlgoSparse, config.AlgoSoft} {
		dir := filepath.Join(root, "runs", string(algo))
		c := config.Default()
		c.Env, c.Net, c.Grid, c.Algo, c.Seed = "HalfCheetah-v5", config.NetMLP, 3, algo, 1
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := c.WriteFile(filepath.Join(dir, runstore.ConfigFile)); err != nil {
			t.Fatal(err)
		}
		var rows []runstore.Row
		for i := range 30 {
			rows = append(rows, runstore.Row{Iteration: i, EnvSteps: int64(100 * (i + 1)), MeanReward: float64(i), GreedyReward: math.NaN(),
				MaxProb: 0.5 + float64(i)/100, Support: 2, Diagnostics: runstore.NoDiagnostics()})
		}
		var b bytes.Buffer
		if err := runstore.WriteMetrics(&b, rows); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, runstore.MetricsFile), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec := `[{"name": "mp", "file": "doc.md", "kind": "panels", "figure": {"path": "figs/mp.png", "curve": "maxprob", "title": "max-prob",
		"panels": [{"title": "3^6", "arms": [{"label": "sparse", "runs": ["runs/sparse"]}, {"label": "soft", "runs": ["runs/soft"]}]}]}}]`
	for name, data := range map[string]string{"tables.json": spec, "doc.md": "# doc\n\n<!-- results:mp -->\n<!-- /results -->\n"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "figs"), 0o755); err != nil {
		t.Fatal(err)
	}
	tables := func(args ...string) (int, string) {
		var o, e bytes.Buffer
		code := runMain(context.Background(), append([]string{"tables", "--root", root, "--spec", "tables.json", "--provenance", ""}, args...), &o, &e)
		return code, o.String() + e.String()
	}
	if code, out := tables("--check"); code != exitFailure || !strings.Contains(out, "the figure of mp, figs/mp.png") {
		t.Fatalf("before the first write: exit %d, want %d naming the figure: %s", code, exitFailure, out)
	}
	if code, out := tables(); code != exitOK || !strings.Contains(out, "figure mp: written to figs/mp.png") {
		t.Fatalf("pcl tables: exit %d: %s", code, out)
	}
	doc, err := os.ReadFile(filepath.Join(root, "doc.md"))
	if err != nil || !strings.Contains(string(doc), "![max-prob](figs/mp.png)") {
		t.Fatalf("doc.md does not link the figure (%v):\n%s", err, doc)
	}
	if code, out := tables("--check"); code != exitOK || !strings.Contains(out, "every table (1) and figure (1) matches its runs") {
		t.Fatalf("after the write: exit %d: %s", code, out)
	}
	if err := os.WriteFile(filepath.Join(root, "figs", "mp.png"), []byte("not the figure"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := tables("--check"); code != exitFailure || !strings.Contains(out, "the figure of mp") {
		t.Fatalf("a changed PNG: exit %d, want %d naming the figure: %s", code, exitFailure, out)
	}
}
