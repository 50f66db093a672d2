package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		{"eval without run", []string{"eval"}, 2, "--run"},
		{"eval missing run", []string{"eval", "--run", filepath.Join(dir, "missing")}, 1, "config"},
		{"compare bad bases", []string{"compare", "--bases", "5,x"}, 2, "bases"},
		{"train ok", append([]string{"train", "--out", filepath.Join(dir, "run")}, good...), 0, ""},
		{"train again refuses", append([]string{"train", "--out", filepath.Join(dir, "run")}, good...), 1, "--resume"},
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
		if tc.name == "eval ok" && !strings.Contains(out.String(), "after 3 iterations") {
			t.Errorf("eval output %q does not report the resumed run's 3 iterations", out.String())
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
