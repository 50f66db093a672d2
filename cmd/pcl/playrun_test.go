package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// pcl play --run replays a trained run's greedy policy; with stdin at its end it plays whole
// episodes without pausing.
func TestPlayRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	var out, errb bytes.Buffer
	train := []string{"train", "--env", "Copy-v0", "--base", "3", "--batch", "8", "--hidden", "8", "--iters", "2", "--eval-every", "0", "--out", dir}
	if code := runMain(context.Background(), train, &out, &errb); code != 0 {
		t.Fatalf("train: exit %d: %s", code, errb.String())
	}
	tests := []struct {
		name  string
		args  []string
		stdin string
		code  int
		want  []string
	}{
		{"piped: whole episodes", []string{"--run", dir, "--seed", "4", "--episodes", "2"}, "", 0,
			[]string{"greedy policy at min_length 2 (trained to 2)", "Policy  : p = ", "of 12 actions in the support", "episode over: return"}},
		{"given input and level", []string{"--run", dir, "--input", "2,1,0,2", "--level", "4"}, "", 0,
			[]string{"min_length 4", "Target  :  C  B  A  C", "episode over"}},
		{"q quits", []string{"--run", dir}, "q\n", 0, []string{"Enter: next step, q: quit"}},
		{"env with run", []string{"--run", dir, "--env", "Reverse-v0"}, "", 2, nil},
		{"actions with run", []string{"--run", dir, "--actions", "1,2"}, "", 2, nil},
		{"delay without run", []string{"--delay", "1s"}, "", 2, nil},
		{"bad input", []string{"--run", dir, "--input", "1,x"}, "", 2, nil},
		{"symbol outside the base", []string{"--run", dir, "--input", "1,9"}, "", 2, nil},
		{"missing run", []string{"--run", filepath.Join(dir, "nope")}, "", 1, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := playCmd(context.Background(), tc.args, strings.NewReader(tc.stdin), &out, &errb)
			code := 0
			switch {
			case err == nil:
			case errors.As(err, new(usageError)):
				code = 2
			default:
				code = 1
			}
			if code != tc.code {
				t.Fatalf("exit %d (%v), want %d", code, err, tc.code)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			if tc.name == "piped: whole episodes" && strings.Count(out.String(), "episode over") != 2 {
				t.Errorf("want 2 episodes:\n%s", out.String())
			}
		})
	}
}
