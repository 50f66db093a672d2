package registry

import (
	"context"
	"slices"
	"testing"

	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/classic"
)

func TestDefault(t *testing.T) {
	ids := Default().IDs()
	if len(ids) != 11 {
		t.Fatalf("ids %v", ids)
	}
	for _, id := range ids {
		opts := map[string]any{"base": 4}
		if slices.Contains(classic.IDs(), id) {
			opts = nil
		}
		env, err := Make(id, opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := env.Reset(nil, nil); err != nil {
			t.Fatal(err)
		}
		v, err := MakeVec(id, 3, map[string]any{"autoreset": "disabled"})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := v.Reset(context.Background(), envs.ResetRequest{}); err != nil || v.NumEnvs() != 3 {
			t.Fatal(err)
		}
	}
	// fresh registries share nothing
	a, b := Default(), Default()
	if err := a.Register("Extra-v0", envs.Factory{Make: func(map[string]any) (envs.Env, error) { return nil, nil }}); err != nil {
		t.Fatal(err)
	}
	if len(b.IDs()) != 11 {
		t.Error("registries share state")
	}
}
