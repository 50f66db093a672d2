package envs_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/envcheck"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// syncMaker makes SyncVecs of id's single-copy Env from the default registry.
func syncMaker(id string) envcheck.Maker {
	reg := registry.Default()
	return func(_ context.Context, copies int, mode envs.AutoresetMode) (envs.VecEnv, error) {
		return envs.SyncVec(func() (envs.Env, error) { return reg.Make(id, nil) }, copies, mode)
	}
}

// A SyncVec of single copies keeps the whole contract, in both autoreset modes.
func TestSyncVecKeepsTheContract(t *testing.T) {
	for _, id := range []string{"CartPole-v1", "Pendulum-v1", "Copy-v0", "MountainCar-v0"} {
		if r := envcheck.Check(context.Background(), id, syncMaker(id), envcheck.Options{Seed: 5, Steps: 300}); !r.OK() {
			t.Errorf("%s:\n%s", id, r)
		}
	}
}

// A SyncVec of CartPole copies steps exactly as the native VecEnv of the same seeds and actions,
// ends included (autoreset disabled).
func TestSyncVecMatchesTheNativeVecEnv(t *testing.T) {
	ctx := context.Background()
	const n = 3
	native, err := registry.Default().MakeRequest(envs.VecRequest{ID: "CartPole-v1", Copies: n, Autoreset: envs.AutoresetDisabled})
	if err != nil {
		t.Fatal(err)
	}
	sync, err := syncMaker("CartPole-v1")(ctx, n, envs.AutoresetDisabled)
	if err != nil {
		t.Fatal(err)
	}
	seeds := []int64{1, 2, 3}
	a, _, err := native.Reset(ctx, envs.ResetRequest{Seeds: seeds})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := sync.Reset(ctx, envs.ResetRequest{Seeds: seeds})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Floats, b.Floats) {
		t.Fatalf("reset: %v against %v", a.Floats, b.Floats)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for step := range 120 {
		actions := envs.NewBatch(native.ActionSpace(), n)
		for i := range n {
			actions.Ints[i] = rng.Int64N(2)
		}
		x, err := native.Step(ctx, actions)
		if err != nil {
			t.Fatal(err)
		}
		y, err := sync.Step(ctx, actions)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(x.Obs.Floats, y.Obs.Floats) || !slices.Equal(x.Rewards, y.Rewards) || !slices.Equal(x.Terminated, y.Terminated) || !slices.Equal(x.Truncated, y.Truncated) {
			t.Fatalf("step %d: native %v %v %v %v, sync %v %v %v %v", step, x.Obs.Floats, x.Rewards, x.Terminated, x.Truncated, y.Obs.Floats, y.Rewards, y.Terminated, y.Truncated)
		}
	}
}

// Bad requests and actions are errors that say what and where; nothing is stepped.
func TestSyncVecRefusals(t *testing.T) {
	ctx := context.Background()
	v, err := syncMaker("CartPole-v1")(ctx, 2, envs.AutoresetDisabled)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := v.Reset(ctx, envs.ResetRequest{Seeds: []int64{1}}); err == nil {
		t.Error("one seed for two copies: no error")
	}
	bad := envs.NewBatch(v.ActionSpace(), 2)
	bad.Ints[1] = 7
	if _, err := v.Step(ctx, bad); err == nil {
		t.Error("action 7 of Discrete(2): no error")
	}
	if _, err := envs.SyncVec(func() (envs.Env, error) { return nil, nil }, 2, envs.AutoresetDisabled); err == nil {
		t.Error("a nil env: no error")
	}
	if _, err := envs.SyncVec(nil, 0, envs.AutoresetDisabled); err == nil {
		t.Error("0 copies: no error")
	}
}
