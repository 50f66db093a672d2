package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/bridge"
)

// A user's Gymnasium envs (examples/gymnasium/user_envs, outside python_server/, on the server's
// PYTHONPATH): checked as a module:Class id with --allow-imports and as an id its package registers
// with --env-module, and trained through the server; without --allow-imports, or with a package or
// class that is broken, the error says which.
func TestUserGymnasiumEnvs(t *testing.T) {
	if _, err := bridge.FindRoot(); err != nil {
		t.Fatal(err)
	}
	needServer(t)
	fixtures, err := filepath.Abs(filepath.Join("..", "..", "examples", "gymnasium"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PYTHONPATH", fixtures)
	run := filepath.Join(t.TempDir(), "run")
	cases := []struct {
		name string
		args []string
		code int
		says string
	}{
		{"class with --allow-imports", []string{"check", "user_envs.line:LineEnv", "--allow-imports", "--steps", "100"}, exitOK, "keeps every rule"},
		{"registered id with --env-module", []string{"check", "UserLine-v0", "--env-module", "user_envs", "--steps", "100"}, exitOK, "keeps every rule"},
		{"trained through the server", []string{"train", "--env", "UserLine-v0", "--env-module", "user_envs", "--iters", "3", "--out", run}, exitOK, ""},
		{"class without --allow-imports", []string{"check", "user_envs.line:LineEnv"}, exitFailure, "--allow-imports"},
		{"a broken env fails its rule", []string{"check", "user_envs.line:WrongShapeEnv", "--allow-imports"}, exitFailure, "FAIL reset-in-space"},
		{"not an env", []string{"check", "user_envs.line:NotEnv", "--allow-imports"}, exitFailure, "not a gymnasium.Env"},
		{"module that does not import", []string{"check", "user_envs.broken:X", "--allow-imports"}, exitFailure, "broken on purpose"},
		{"package that does not import", []string{"check", "UserLine-v0", "--env-module", "no_such_pkg"}, exitFailure, "--env-module no_such_pkg"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var o, e bytes.Buffer
			code := runMain(context.Background(), tc.args, &o, &e)
			if code != tc.code || !strings.Contains(o.String()+e.String(), tc.says) {
				t.Errorf("pcl %s: exit %d, want %d, with %q:\n%s%s", strings.Join(tc.args, " "), code, tc.code, tc.says, o.String(), e.String())
			}
		})
	}
	if _, err := os.Stat(filepath.Join(run, "metrics.csv")); err != nil {
		t.Errorf("the trained run: %v", err)
	}
}
