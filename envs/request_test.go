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

// Int64Of takes every Go integer type and integral floats, and refuses the rest with a reason.
func TestInt64Of(t *testing.T) {
	for _, v := range []any{int(7), int8(7), int16(7), int32(7), int64(7), uint(7), uint8(7), uint16(7), uint32(7), uint64(7), 7.0} {
		if n, err := envs.Int64Of(v); n != 7 || err != nil {
			t.Errorf("Int64Of(%T 7) = %d, %v", v, n, err)
		}
	}
	for _, v := range []any{uint64(1 << 63), 7.5, float64(1 << 60), "7", nil} {
		if _, err := envs.Int64Of(v); err == nil {
			t.Errorf("Int64Of(%T %v) accepted", v, v)
		}
	}
}
