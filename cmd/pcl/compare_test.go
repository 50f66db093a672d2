package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
)

func TestCompareUsageErrors(t *testing.T) {
	out := t.TempDir()
	cases := []struct {
		name string
		args []string
		msg  string
	}{
		{"algo", []string{"--algo", "soft"}, "--sparse-alpha and --soft-alpha"},
		{"alpha", []string{"--alpha", "0.1"}, "--sparse-alpha and --soft-alpha"},
		{"base", []string{"--base", "2"}, "--base does not apply: compare takes its bases from --bases"},
		{"tsallis-q", []string{"--tsallis-q", "1.5"}, "--tsallis-q does not apply"},
		{"mlp flag", []string{"--grid", "3"}, "--grid does not apply"},
		{"base without weight", []string{"--bases", "2,3", "--sparse-alpha", "2:0.05"}, "--sparse-alpha: base 3 has no weight"},
		{"weight of another base", []string{"--bases", "2", "--soft-alpha", "2:0.1,5:0.1"}, "--soft-alpha: base 5 is not among"},
		{"bad weight", []string{"--bases", "2", "--soft-alpha", "abc"}, "--soft-alpha"},
		{"invalid weight", []string{"--bases", "2", "--soft-alpha", "-1"}, "alpha"},
		{"jobs", []string{"--jobs", "0"}, "--jobs"},
		{"seeds", []string{"--seeds", "0"}, "--seeds"},
	}
	for _, tc := range cases {
		var o, e bytes.Buffer
		args := append([]string{"compare", "--out", out, "--iters", "1"}, tc.args...)
		if code := runMain(context.Background(), args, &o, &e); code != 2 || !strings.Contains(e.String(), tc.msg) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and a message with %q", tc.name, code, e.String(), tc.msg)
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("usage errors left files in --out: %v", entries)
	}
}

// compare --jobs 2 trains in `pcl sweep run` subprocesses (this test binary, see TestMain) with
// per-base weights: the runs get exactly the configs and, the arithmetic being deterministic, the
// training metrics of in-process runs (--jobs 1); the figures and the report are written, and
// re-running compare on the finished runs reproduces report.md byte for byte.
func TestCompareJobsAndSummary(t *testing.T) {
	t.Setenv(asPCLEnv, "1")
	t.Setenv("SPARSEPCL_BLAS", "gonum")
	args := func(out string, extra ...string) []string {
		return append([]string{"compare", "--out", out, "--bases", "2,3", "--seeds", "2", "--batch", "16", "--hidden", "16",
			"--iters", "4", "--eval-every", "2", "--eval-episodes", "4", "--sparse-alpha", "2:0.05,3:0.07", "--soft-alpha", "0.03"}, extra...)
	}
	outs := map[string]string{"1": t.TempDir(), "2": t.TempDir()}
	for _, jobs := range []string{"1", "2"} {
		var o, e bytes.Buffer
		if code := runMain(context.Background(), args(outs[jobs], "--jobs", jobs), &o, &e); code != 0 {
			t.Fatalf("--jobs %s: exit %d; stderr %s", jobs, code, e.String())
		}
		for _, want := range []string{"| Copy | 8 | sparse | 0.05 | 4 | 2/2 |", "| Copy | 12 | sparse | 0.07 | 4 | 2/2 |", "| Copy | 8 | soft | 0.03 | 4 | 2/2 |", "| Copy | 12 | soft | 0.03 | 4 | 2/2 |"} {
			if !strings.Contains(o.String(), want) {
				t.Errorf("--jobs %s: report lacks %q:\n%s", jobs, want, o.String())
			}
		}
	}
	out := outs["2"]
	for _, f := range []string{"manifest.json", "report.md", "grid.png", "Copy-A8.png", "Copy-A12.png", "logs/Copy-A12-soft-a0.03-s2.log"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("compare --jobs 2 did not write %s: %v", f, err)
		}
	}
	for _, run := range []string{"Copy-A8-sparse-a0.05-s1", "Copy-A8-soft-a0.03-s2", "Copy-A12-sparse-a0.07-s2", "Copy-A12-soft-a0.03-s1"} {
		a, errA := config.ReadFile(filepath.Join(outs["1"], "runs", run, runstore.ConfigFile))
		b, errB := config.ReadFile(filepath.Join(out, "runs", run, runstore.ConfigFile))
		if errA != nil || errB != nil {
			t.Fatalf("%s: %v, %v", run, errA, errB)
		}
		if d := config.Diff(a, b); d != nil {
			t.Errorf("%s: the subprocess run has another config than the in-process one: %v", run, d)
		}
		ra, errA := runstore.ReadMetrics(filepath.Join(outs["1"], "runs", run, runstore.MetricsFile))
		rb, errB := runstore.ReadMetrics(filepath.Join(out, "runs", run, runstore.MetricsFile))
		if errA != nil || errB != nil || len(ra) != 4 || len(rb) != 4 {
			t.Fatalf("%s: %d and %d rows (%v, %v), want 4", run, len(ra), len(rb), errA, errB)
		}
		for i := range ra {
			ra[i].WallSeconds, rb[i].WallSeconds = 0, 0
			// Printed, NaN equals NaN: the rows match where both lack a value.
			if fmt.Sprintf("%+v", ra[i]) != fmt.Sprintf("%+v", rb[i]) {
				t.Errorf("%s iteration %d: in-process %+v, subprocess %+v", run, i, ra[i], rb[i])
			}
		}
	}
	before, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	var o, e bytes.Buffer
	if code := runMain(context.Background(), args(out, "--jobs", "2"), &o, &e); code != 0 || strings.Count(o.String(), "left alone") != 8 {
		t.Fatalf("re-run: exit %d, stdout %s, stderr %s", code, o.String(), e.String())
	}
	after, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil || !bytes.Equal(before, after) {
		t.Errorf("report.md from the finished runs differs (%v):\n%s\n%s", err, before, after)
	}
}

// A cancelled compare reports the interruption with exit code 130, with either kind of worker.
func TestCompareCancelled(t *testing.T) {
	t.Setenv(asPCLEnv, "1")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, jobs := range []string{"1", "2"} {
		var o, e bytes.Buffer
		args := []string{"compare", "--out", t.TempDir(), "--bases", "2", "--seeds", "1", "--batch", "4", "--hidden", "8", "--iters", "2", "--jobs", jobs}
		if code := runMain(ctx, args, &o, &e); code != exitInterrupted || !strings.Contains(e.String(), "interrupted") {
			t.Errorf("--jobs %s: exit %d, stderr %q; want %d and an interruption", jobs, code, e.String(), exitInterrupted)
		}
	}
}
