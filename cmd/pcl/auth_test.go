package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/bridge"
	"github.com/sparsepcl/sparsepcl/bridge/auth"
)

// TestAuthNew: `pcl auth new FILE` writes a private credential file, shows no password, and
// never overwrites one.
func TestAuthNew(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "auth.json")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"new", []string{"auth", "new", file}, exitOK, "wrote " + file},
		{"again", []string{"auth", "new", file}, exitFailure, "exists already; not overwriting it"},
		{"no subcommand", []string{"auth"}, exitUsage, "give a subcommand"},
		{"no file", []string{"auth", "new"}, exitUsage, "give one FILE"},
		{"two files", []string{"auth", "new", "a", "b"}, exitUsage, "give one FILE"},
		{"unknown", []string{"auth", "show", file}, exitUsage, `unknown subcommand "show"`},
	}
	for _, tt := range tests {
		var o, e bytes.Buffer
		if code := runMain(context.Background(), tt.args, &o, &e); code != tt.code || !strings.Contains(o.String()+e.String(), tt.want) {
			t.Errorf("%s: exit %d (want %d), output %q, want it to say %q", tt.name, code, tt.code, o.String()+e.String(), tt.want)
		}
		c, err := auth.Load(file)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if strings.Contains(o.String()+e.String(), c.Password) {
			t.Errorf("%s: the output shows the password", tt.name)
		}
	}
}

// TestTrainAuthServer trains CartPole on a real server over tcp loopback that requires
// credentials: the right credential file (by flag or by $SPARSEPCL_AUTH_FILE) trains; a wrong one,
// none, and one others may read are refused, each with its message.
func TestTrainAuthServer(t *testing.T) {
	needServer(t)
	dir := t.TempDir()
	good, wrong, open := filepath.Join(dir, "good.json"), filepath.Join(dir, "wrong.json"), filepath.Join(dir, "open.json")
	for _, f := range []string{good, wrong, open} {
		if _, err := auth.New(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(open, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	srv, err := bridge.StartServer(ctx, bridge.ServerOptions{Bind: "tcp://127.0.0.1:0", AuthFile: good})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tests := []struct {
		name   string
		flags  []string
		envVar string
		code   int
		want   string
	}{
		{"right credential", []string{"--auth-file", good}, "", exitOK, "run "},
		{"right credential from the environment", nil, good, exitOK, "run "},
		{"wrong credential", []string{"--auth-file", wrong}, "", exitFailure, "the server refused the credentials"},
		{"missing credential", nil, "", exitFailure, "the server requires credentials (ZeroMQ PLAIN) and none were given"},
		{"credential file open to others", []string{"--auth-file", open}, "", exitFailure, "mode 0644, open to group or others"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(auth.EnvVar, tt.envVar)
			out := filepath.Join(dir, "run"+string(rune('a'+i)))
			args := append([]string{"train", "--env", "CartPole-v1", "--server", srv.Endpoint, "--iters", "3", "--eval-every", "1", "--out", out}, tt.flags...)
			var o, e bytes.Buffer
			start := time.Now()
			code := runMain(ctx, args, &o, &e)
			if code != tt.code || !strings.Contains(o.String()+e.String(), tt.want) {
				t.Fatalf("exit %d (want %d); want the output to say %q:\n%s%s", code, tt.code, tt.want, o.String(), e.String())
			}
			if tt.code == exitOK {
				for _, f := range []string{"checkpoint.bin", "config.json", "run.json", "metrics.csv"} {
					if _, err := os.Stat(filepath.Join(out, f)); err != nil {
						t.Errorf("run directory lacks %s: %v", f, err)
					}
				}
				return
			}
			if !strings.Contains(e.String(), srv.Endpoint) && !strings.Contains(tt.want, "mode") {
				t.Errorf("the refusal does not name the endpoint %s:\n%s", srv.Endpoint, e.String())
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("the refusal took %v", d)
			}
		})
	}
}
