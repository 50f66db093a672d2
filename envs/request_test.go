package envs_test

import (
	"testing"

	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// MakeRequest passes a request's options and autoreset mode to the registry and refuses an
// autoreset mode hidden in the options.
func TestMakeRequest(t *testing.T) {
	reg := registry.Default()
	req := envs.VecRequest{ID: "Copy-v0", Copies: 3, Autoreset: envs.AutoresetDisabled, Options: map[string]any{"base": 5}}
	env, err := reg.MakeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	if env.NumEnvs() != 3 || env.AutoresetMode() != envs.AutoresetDisabled {
		t.Fatalf("%d copies in mode %v, want 3 in disabled", env.NumEnvs(), env.AutoresetMode())
	}
	if _, ok := req.Options["autoreset"]; ok {
		t.Fatal("MakeRequest changed the request's options")
	}
	req.Options = map[string]any{"autoreset": "disabled"}
	if _, err := reg.MakeRequest(req); err == nil {
		t.Fatal("an autoreset mode in the options was accepted")
	}
}
