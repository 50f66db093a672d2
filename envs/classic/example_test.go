package classic_test

import (
	"context"
	"fmt"

	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/classic"
)

// One seeded CartPole episode under a simple controller: the same seed and actions give
// Gymnasium's episode, observation for observation (gymnasium.make("CartPole-v1").reset(seed=42)
// gives [0.0273956 -0.00611216 0.03585979 0.0197368] too).
func ExampleNewEnv() {
	env, err := classic.NewEnv("CartPole-v1", nil)
	if err != nil {
		panic(err)
	}
	seed := int64(42)
	obs, _, err := env.Reset(&seed, nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("first observation %.6f\n", obs)
	total, steps := 0.0, 0
	for {
		o := obs.([]float64)
		a := int64(0)
		if o[2]+0.5*o[3] > 0 {
			a = 1
		}
		var r float64
		var terminated, truncated bool
		obs, r, terminated, truncated, _, err = env.Step(a)
		if err != nil {
			panic(err)
		}
		total += r
		steps++
		if terminated || truncated {
			fmt.Println("return", total, "after", steps, "steps, truncated:", truncated)
			break
		}
	}
	_, _, _, _, _, err = env.Step(int64(0))
	fmt.Println(err)
	// Output:
	// first observation [0.027396 -0.006112 0.035860 0.019737]
	// return 500 after 500 steps, truncated: true
	// CartPole-v1: step after the episode ended; call Reset
}

// A batch of Pendulums with per-copy seeds and reset bounds; a NaN torque is refused before any copy
// moves.
func ExampleNewVecEnv() {
	ctx := context.Background()
	venv, err := classic.NewVecEnv("Pendulum-v1", 3, map[string]any{"autoreset": "disabled"})
	if err != nil {
		panic(err)
	}
	obs, _, err := venv.Reset(ctx, envs.ResetRequest{Seeds: []int64{0, 1, 2}, Options: map[string]any{"x_init": 0.5, "y_init": 0.1}})
	if err != nil {
		panic(err)
	}
	fmt.Println(obs.DType, obs.Shape)
	torques := envs.NewBatch(venv.ActionSpace(), 3)
	torques.Floats[1] = 2.5
	_, err = venv.Step(ctx, torques)
	fmt.Println(err)
	// Output:
	// float32 [3 3]
	// step: copy 1: Pendulum-v1: action 2.5 outside the action space Box(-2, 2, [1], float32)
}
