package envmaker

import (
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/model/mlp"
	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/bridge"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// gymFlatten is a Python program printing, as JSON, gymnasium.spaces.flatten of the first
// observation of env argv[1] after reset(seed) for each seed in argv[2:].
const gymFlatten = `
import importlib, json, sys
import gymnasium as gym
from gymnasium.spaces import flatten
env_id = sys.argv[1]
if ":" in env_id:
    mod, _, cls = env_id.partition(":")
    env = getattr(importlib.import_module(mod), cls)()
else:
    env = gym.make(env_id)
out = []
for s in sys.argv[2:]:
    obs, _ = env.reset(seed=int(s))
    out.append([float(x) for x in flatten(env.observation_space, obs)])
print(json.dumps(out))
`

// The observation encoder flattens Tuple and Dict observations exactly as gymnasium.spaces.flatten
// does: the encodings of observations served by the real server equal Gymnasium's own flattening
// of the same observations (same env, same seeds).
func TestObservationsFlattenLikeGymnasium(t *testing.T) {
	needServer(t)
	root, err := bridge.FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	seeds := []int64{3, 17, 29, 41, 58, 63}
	for _, tc := range []struct {
		id  string
		dim int
	}{
		{"Blackjack-v1", 32 + 11 + 2},
		{"python_server.testing_envs:DictObsEnv", 2 + 3 + 2 + 4 + 3},
	} {
		t.Run(tc.id, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			m := &Maker{Registry: registry.Default(), Server: bridge.ServerOptions{AllowImports: true}}
			cfg := config.Default()
			cfg.Env = tc.id
			env, err := m.MakeVec(ctx, train.EnvRequest(cfg, len(seeds)))
			if err != nil {
				t.Fatal(err)
			}
			defer env.Close()
			enc, err := mlp.NewEncoder(env.ObservationSpace())
			if err != nil {
				t.Fatal(err)
			}
			if enc.Dim() != tc.dim {
				t.Fatalf("%v encodes to %d inputs, want %d", env.ObservationSpace(), enc.Dim(), tc.dim)
			}
			obs, _, err := env.Reset(ctx, envs.ResetRequest{Seeds: seeds})
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"-c", gymFlatten, tc.id}
			for _, s := range seeds {
				args = append(args, strconv.FormatInt(s, 10))
			}
			cmd := exec.CommandContext(ctx, bridge.FindPython(root), args...)
			cmd.Dir = root
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("gymnasium flatten: %v", err)
			}
			var want [][]float64
			if err := json.Unmarshal(out, &want); err != nil {
				t.Fatal(err)
			}
			got := make([]float32, enc.Dim())
			for r := range seeds {
				if err := enc.Encode(got, obs, r); err != nil {
					t.Fatal(err)
				}
				if len(want[r]) != len(got) {
					t.Fatalf("seed %d: gymnasium flattens to %d values, the encoder to %d", seeds[r], len(want[r]), len(got))
				}
				for i := range got {
					if got[i] != float32(want[r][i]) {
						t.Errorf("seed %d: encoding %v, gymnasium.spaces.flatten %v", seeds[r], got, want[r])
						break
					}
				}
			}
		})
	}
}

// Observation spaces the encoder cannot flatten are refused by name: images and nesting deeper
// than one level (SpacesEnv's Dict holds a Tuple).
func TestUnflattenableObservationIsAClearError(t *testing.T) {
	needServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := &Maker{Registry: registry.Default(), Server: bridge.ServerOptions{AllowImports: true}}
	cfg := config.Default()
	cfg.Env = "python_server.testing_envs:SpacesEnv"
	env, err := m.MakeVec(ctx, train.EnvRequest(cfg, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	_, err = mlp.NewEncoder(env.ObservationSpace())
	if err == nil || !strings.Contains(err.Error(), `entry "tup"`) || !strings.Contains(err.Error(), "nested") {
		t.Errorf("error %v, want one naming the nested entry", err)
	}
}
