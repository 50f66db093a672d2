package registry_test

import (
	"context"
	"fmt"

	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// Play Copy with base 5 on a given input: the combined action a = move + 2*write + 4*char moves
// right and writes the symbol under the head.
func ExampleMake() {
	env, err := registry.Make("Copy-v0", map[string]any{"base": 5})
	if err != nil {
		panic(err)
	}
	defer env.Close()
	obs, _, err := env.Reset(nil, map[string]any{"input": []int64{3, 1, 4}})
	if err != nil {
		panic(err)
	}
	fmt.Println("spaces:", env.ObservationSpace(), env.ActionSpace())
	total := 0.0
	for done := false; !done; {
		action := 1 + 2*1 + 4*obs.(int64) // move right, write, char = observed symbol
		var r float64
		var terminated, truncated bool
		obs, r, terminated, truncated, _, err = env.Step(action)
		if err != nil {
			panic(err)
		}
		total += r
		done = terminated || truncated
	}
	fmt.Println("return:", total)
	// Output:
	// spaces: Discrete(6) Discrete(20)
	// return: 3
}

// Step 400 copies of Reverse in one call on flat typed batches, as a learner does.
func ExampleMakeVec() {
	venv, err := registry.MakeVec("Reverse-v0", 400, map[string]any{"base": 8, "autoreset": "disabled"})
	if err != nil {
		panic(err)
	}
	defer venv.Close()
	ctx := context.Background()
	seeds := make([]int64, venv.NumEnvs())
	for i := range seeds {
		seeds[i] = int64(i)
	}
	obs, _, err := venv.Reset(ctx, envs.ResetRequest{Seeds: seeds})
	if err != nil {
		panic(err)
	}
	actions := envs.NewArray(envs.Int64, venv.NumEnvs()) // all zeros: move left, do not write
	res, err := venv.Step(ctx, actions)
	if err != nil {
		panic(err)
	}
	fmt.Println(obs.DType, obs.Shape, len(res.Rewards), venv.ActionSpace())
	// Output: int64 [400] 400 Discrete(32)
}
