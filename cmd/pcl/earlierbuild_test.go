package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunsOfAnEarlierBuildResumeAndEvaluate keeps the run directories of an earlier build
// working: testdata/earlier-build holds two short runs (checkpoint, replay, config.json,
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
