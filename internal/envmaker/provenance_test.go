package envmaker

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/provenance"
	"github.com/sparsepcl/sparsepcl/bridge"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// A run on a remote env records the server's gymnasium, mujoco and numpy versions in run.json:
// those of the interpreter that serves it. A Go-native run records none.
func TestRunRecordsEnvServerVersions(t *testing.T) {
	needServer(t)
	root, err := bridge.FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bridge.FindPython(root), "-c",
		"import gymnasium, mujoco, numpy; print(gymnasium.__version__, mujoco.__version__, numpy.__version__)").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(string(out))
	for _, tc := range []struct {
		name   string
		remote bool
	}{{"remote", true}, {"go-native", false}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mlpConfig("CartPole-v1", func(c *config.Config) { c.Iters, c.NumEnvs, c.StepsPerIter, c.EvalEvery = 1, 1, 10, 0 })
			dir := t.TempDir()
			if _, err := runIn(t, dir, cfg, &Maker{Registry: registry.Default(), ForceRemote: tc.remote}, false); err != nil {
				t.Fatal(err)
			}
			f, err := provenance.Read(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Sessions) != 1 {
				t.Fatalf("%d sessions", len(f.Sessions))
			}
			got := f.Sessions[0].EnvServer
			if !tc.remote {
				if got != nil {
					t.Errorf("go-native run records an env server: %v", got)
				}
				return
			}
			if got["gymnasium"] != want[0] || got["mujoco"] != want[1] || got["numpy"] != want[2] || got["protocol"] == "" {
				t.Errorf("env server %v, want gymnasium, mujoco, numpy %v", got, want)
			}
		})
	}
}
