package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunsOfAnEarlierBuildResumeAndEvaluate keeps the run directories of an earlier build
// working: testdata/earlier-build holds two short runs (copy and halfcheetah; copy-soft-8e6b7dd is
// TestReproduceRebuildsTheRecordedCommit's) (checkpoint, replay, config.json,
// run.json, metrics.csv) written by the binary of commit b0d22de, before the one collector and
// the networks' new names: Copy with the LSTM, and HalfCheetah on the 3^6 grid with the MLPs.
// Each must evaluate and resume to more iterations with this tree's code.
func TestRunsOfAnEarlierBuildResumeAndEvaluate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, tc := range []struct {
		name   string
		remote bool
		eval   []string
		says   string
	}{
		{"copy", false, []string{"--episodes", "8", "--per-length=false"}, "greedy"},
		{"halfcheetah", true, []string{"--episodes", "2"}, "return"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.remote {
				needServer(t)
			}
			dir := filepath.Join(t.TempDir(), tc.name)
			if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "earlier-build", tc.name))); err != nil {
				t.Fatal(err)
			}
			var o, e bytes.Buffer
			if code := runMain(ctx, append([]string{"eval", "--run", dir}, tc.eval...), &o, &e); code != 0 || !strings.Contains(o.String(), tc.says) {
				t.Fatalf("pcl eval: exit %d\nstdout: %s\nstderr: %s", code, o.String(), e.String())
			}
			o.Reset()
			e.Reset()
			if code := runMain(ctx, []string{"train", "--out", dir, "--resume", "--iters", "8", "--progress-every", "0"}, &o, &e); code != 0 {
				t.Fatalf("pcl train --resume: exit %d: %s", code, e.String())
			}
			f, err := os.Open(filepath.Join(dir, "metrics.csv"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rows, err := csv.NewReader(f).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 1+8 || rows[len(rows)-1][0] != "7" {
				t.Fatalf("metrics.csv after the resume: %d rows, last iteration %v; want 8 iterations", len(rows)-1, rows[len(rows)-1][0])
			}
		})
	}
}

// earlierCommit made testdata/earlier-build/copy-soft-8e6b7dd: a Copy run (|A| = 20, soft PCL, 32
// hidden units, batch 64, 8 iterations, the pure-Go BLAS) by the stamped binary of commit 8e6b7dd,
// before 2a68d74 (one experience collector) changed the soft path's arithmetic.
const earlierCommit = "8e6b7dd2472576e3deb20a7f76f5b8207e6f5efb"

// TestReproduceRebuildsTheRecordedCommit re-runs a run made by an older commit whose arithmetic
// differs from this tree's: this tree's code parts from it (pcl reproduce --here), and pcl
// reproduce rebuilds the recorded commit into the user cache (from this checkout's history;
// about a minute or two the first time, nothing after) and reproduces it identically, through
// the recorded pcl train command (8e6b7dd predates the child protocol).
func TestReproduceRebuildsTheRecordedCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an earlier commit")
	}
	needHistory(t, earlierCommit)
	t.Setenv(asPCLEnv, "1") // the --here re-run is a child of this test binary acting as pcl
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "earlier-build", "copy-soft-8e6b7dd"))); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"this tree's code", []string{"--here"}, exitFailure, "across versions: the runs part at iteration 0"},
		{"the recorded commit, rebuilt", nil, exitOK, "identical for 8 iterations"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o, e bytes.Buffer
			start := time.Now()
			code := runMain(ctx, append([]string{"reproduce", "--run", dir}, tc.args...), &o, &e)
			t.Logf("%s in %s:\n%s", tc.name, time.Since(start).Round(time.Second), o.String())
			if code != tc.code || !strings.Contains(o.String(), tc.says) {
				t.Fatalf("exit %d, want %d saying %q\nstdout: %s\nstderr: %s", code, tc.code, tc.says, o.String(), e.String())
			}
		})
	}
}

// needHistory skips t, or fails it under CI=true, when the repository holding the working
// directory does not have commit (a shallow clone, or no git).
func needHistory(t *testing.T, commit string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "cat-file", "-e", commit+"^{commit}").CombinedOutput()
	if err == nil {
		return
	}
	msg := fmt.Sprintf("this test needs the repository's history with commit %s (in a shallow clone: git fetch --unshallow): %v %s", commit, err, out)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}
