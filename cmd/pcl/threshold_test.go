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
)

// pcl train judges a run against the threshold its env registers: Gymnasium's reward_threshold
// for a remote id (FrozenLake-v1: 0.7), the same value for a Go port; an env that registers none
// gets "no threshold" (Blackjack-v1, whose Tuple observation is flattened, too); --threshold overrides.
func TestTrainUsesRegisteredThreshold(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if s, err := bridge.StartServer(ctx, bridge.ServerOptions{}); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python server unavailable: %v", err)
		}
		t.Skipf("python server unavailable (set SPARSEPCL_PYTHON): %v", err)
	} else {
		s.Close()
	}
	small := []string{"--iters", "2", "--num-envs", "2", "--steps-per-iter", "20", "--eval-every", "1", "--progress-every", "0"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"remote", []string{"--env", "FrozenLake-v1"}, "(threshold 0.7)"},
		{"Go port", []string{"--env", "CartPole-v1"}, "(threshold 475)"},
		{"none registered", []string{"--env", "Pendulum-v1", "--grid", "3"}, "no threshold: best greedy "},
		{"Tuple observation, none registered", []string{"--env", "Blackjack-v1"}, "no threshold: best greedy "},
		{"override", []string{"--env", "Pendulum-v1", "--grid", "3", "--threshold", "-5000"}, "solved at iteration 0 (greedy "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o, e bytes.Buffer
			args := append(append([]string{"train", "--out", filepath.Join(t.TempDir(), "run")}, tc.args...), small...)
			if code := runMain(ctx, args, &o, &e); code != 0 {
				t.Fatalf("exit %d: %s", code, e.String())
			}
			if !strings.Contains(o.String(), tc.want) {
				t.Errorf("stdout %q lacks %q", o.String(), tc.want)
			}
		})
	}
}
