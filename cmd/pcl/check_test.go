package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// pcl check passes the Go-native envs and, through the server, the Gymnasium originals; an id
// nobody knows is a usage error; the report names every rule.
func TestCheckCommand(t *testing.T) {
	cases := []struct {
		args   []string
		remote bool
		code   int
		says   string
	}{
		{[]string{"check", "CartPole-v1"}, false, exitOK, "CartPole-v1 keeps every rule"},
		{[]string{"check", "Copy-v0", "--seed", "4", "--steps", "200"}, false, exitOK, "ok   invalid-action"},
		{[]string{"check", "CartPole-v1", "--remote"}, true, exitOK, "ok   after-end"},
		{[]string{"check", "Pendulum-v1", "--remote", "--steps", "250"}, true, exitOK, "ok   deterministic"},
		{[]string{"check", "HalfCheetah-v5", "--steps", "1100"}, true, exitOK, "ok   after-end"},
		{[]string{"check", "NoSuchEnv-v9"}, true, exitUsage, "NoSuchEnv-v9"},
		{[]string{"check"}, false, exitUsage, "give the env id"},
		{[]string{"check", "CartPole-v1", "--steps", "0"}, false, exitUsage, "--steps 0"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			if tc.remote {
				needServer(t)
			}
			var o, e bytes.Buffer
			code := runMain(context.Background(), tc.args, &o, &e)
			if code != tc.code || !strings.Contains(o.String()+e.String(), tc.says) {
				t.Errorf("exit %d, want %d; output lacks %q:\n%s%s", code, tc.code, tc.says, o.String(), e.String())
			}
		})
	}
}
