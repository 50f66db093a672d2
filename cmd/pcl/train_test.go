package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/train"
)

func TestTrainEvalBadInput(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt")
	if err := os.MkdirAll(corrupt, 0o755); err != nil {
		t.Fatal(err)
	}
	good := []string{"--env", "Copy-v0", "--base", "2", "--batch", "8", "--hidden", "8", "--iters", "2", "--eval-episodes", "4"}
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"unknown flag", []string{"train", "--bogus"}, 2, "bogus"},
		{"unknown env", []string{"train", "--env", "Nope-v0", "--out", filepath.Join(dir, "x")}, 2, "Nope-v0"},
		{"bad algo", []string{"train", "--algo", "greedy", "--out", filepath.Join(dir, "y")}, 2, "algo"},
		{"resume without out", []string{"train", "--resume"}, 2, "--out"},
		{"resume without checkpoint", []string{"train", "--resume", "--out", corrupt}, 1, "no checkpoint"},
		{"eval without run", []string{"eval"}, 2, "--run"},
		{"eval missing run", []string{"eval", "--run", filepath.Join(dir, "missing")}, 1, "config"},
		{"compare bad bases", []string{"compare", "--bases", "5,x"}, 2, "bases"},
		{"train ok", append([]string{"train", "--out", filepath.Join(dir, "run")}, good...), 0, ""},
		{"train again refuses", append([]string{"train", "--out", filepath.Join(dir, "run")}, good...), 1, "--resume"},
		{"resume with config flags", []string{"train", "--out", filepath.Join(dir, "run"), "--resume", "--lr", "0.1", "--batch", "3"}, 2, "--batch, --lr"},
		{"resume keeps iters", []string{"train", "--out", filepath.Join(dir, "run"), "--resume"}, 0, ""},
		{"resume extends", []string{"train", "--out", filepath.Join(dir, "run"), "--resume", "--iters", "3"}, 0, ""},
		{"eval ok", []string{"eval", "--run", filepath.Join(dir, "run"), "--episodes", "4"}, 0, ""},
	}
	for _, tc := range cases {
		var out, errb bytes.Buffer
		code := runMain(context.Background(), tc.args, &out, &errb)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d; stderr: %s", tc.name, code, tc.code, errb.String())
			continue
		}
		if tc.msg != "" && !strings.Contains(errb.String(), tc.msg) {
			t.Errorf("%s: stderr %q does not mention %q", tc.name, errb.String(), tc.msg)
		}
		if tc.name == "resume keeps iters" && (!strings.Contains(out.String(), ": 2 iterations") || strings.Contains(out.String(), "NaN")) {
			t.Errorf("resume without --iters: output %q, want the run's own 2 iterations", out.String())
		}
		if tc.name == "eval ok" {
			for _, want := range []string{"after 3 iterations", "greedy reward at the trained level (min_length 2: inputs of 2-4 symbols)", "verdict: not solved", "| 2 (trained) | ", "| 30 | "} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("eval output %q lacks %q", out.String(), want)
				}
			}
		}
	}
	// A corrupt checkpoint is a clear error, not a panic.
	run := filepath.Join(dir, "run")
	if err := os.WriteFile(filepath.Join(run, "checkpoint.bin"), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := runMain(context.Background(), []string{"eval", "--run", run}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "checkpoint") {
		t.Errorf("corrupt checkpoint: exit %d, stderr %q", code, errb.String())
	}
}

// compare reuses complete runs, resumes incomplete ones, refuses runs of another config, and never
// deletes anything in --out.
func TestCompareResumesAndNeverDeletes(t *testing.T) {
	out := t.TempDir()
	args := func(extra ...string) []string {
		return append([]string{"compare", "--out", out, "--bases", "2", "--seeds", "1", "--batch", "4", "--hidden", "8",
			"--eval-episodes", "4", "--eval-every", "1"}, extra...)
	}
	run := filepath.Join(out, "base2", "sparse-seed1")
	notes := filepath.Join(run, "notes.txt")
	steps := []struct {
		name   string
		args   []string
		code   int
		stdout []string // substrings of stdout
		stderr string
		rows   int // metrics rows of the sparse run afterwards
	}{
		{"first", args("--iters", "2"), 0, []string{"| 2 | 8 | sparse |", "| 2 | 8 | soft |"}, "", 2},
		{"again: reused", args("--iters", "2"), 0, []string{"is complete (2 iterations): reused"}, "", 2},
		{"more iterations: resumed", args("--iters", "3"), 0, []string{"resume from iteration 2"}, "", 3},
		{"fewer iterations: reused", args("--iters", "2"), 0, []string{"is complete (3 iterations): reused"}, "", 3},
		{"another config: refused", args("--iters", "3", "--lr", "0.02"), 1, nil, "learning_rate: 0.005 -> 0.02", 3},
	}
	for i, st := range steps {
		var o, e bytes.Buffer
		code := runMain(context.Background(), st.args, &o, &e)
		if code != st.code {
			t.Fatalf("%s: exit %d, want %d; stderr %s", st.name, code, st.code, e.String())
		}
		for _, want := range st.stdout {
			if !strings.Contains(o.String(), want) {
				t.Errorf("%s: stdout lacks %q:\n%s", st.name, want, o.String())
			}
		}
		if st.stderr != "" && !strings.Contains(e.String(), st.stderr) {
			t.Errorf("%s: stderr %q lacks %q", st.name, e.String(), st.stderr)
		}
		rows, err := train.ReadMetrics(filepath.Join(run, train.MetricsFile))
		if err != nil || len(rows) != st.rows {
			t.Errorf("%s: sparse run has %d metrics rows (%v), want %d", st.name, len(rows), err, st.rows)
		}
		if i == 0 {
			if err := os.WriteFile(notes, []byte("mine"), 0o644); err != nil {
				t.Fatal(err)
			}
		} else if b, err := os.ReadFile(notes); err != nil || string(b) != "mine" {
			t.Errorf("%s: the user's file in the run dir was lost: %v", st.name, err)
		}
	}
}
