package classic

import (
	"context"
	"math"
	"testing"

	"github.com/sparsepcl/sparsepcl/envs"
)

// FuzzInput feeds arbitrary reset bounds, seeds and actions to every env, single and batched: each
// call either succeeds with observations inside the observation space's float32 range (or its
// bounds, for the bounded components), or returns an error; nothing panics.
func FuzzInput(f *testing.F) {
	f.Add(uint8(0), int64(1), 0.0, 0.0, 0.5, int64(1), false)
	f.Add(uint8(1), int64(-1), -0.2, 0.1, math.NaN(), int64(7), true)
	f.Add(uint8(3), int64(1<<40), math.Inf(-1), 0.0, 1.0000001, int64(-1), true)
	f.Add(uint8(4), int64(9), 3.0, -1.0, -2.0, int64(2), false)
	f.Fuzz(func(t *testing.T, which uint8, seed int64, lo, hi, fa float64, ia int64, perCopy bool) {
		id := IDs()[int(which)%len(IDs())]
		keys := [2]string{OptLow, OptHigh}
		if id == "Pendulum-v1" {
			keys = [2]string{OptXInit, OptYInit}
		}
		opts := map[string]any{keys[0]: lo, keys[1]: hi}
		e, err := NewEnv(id, nil)
		if err != nil {
			t.Fatal(err)
		}
		var action any = []float64{fa}
		if e.sp.discrete > 0 {
			action = ia
		}
		if _, _, err := e.Reset(&seed, opts); err == nil {
			for range 3 {
				o, _, _, _, _, err := e.Step(action)
				if err != nil {
					break
				}
				for _, x := range o.([]float64) {
					if x != f32(x) {
						t.Fatalf("observation %v is not a float32", o)
					}
				}
			}
		}
		v, err := NewVecEnv(id, 2, map[string]any{"autoreset": "next-step", "max_episode_steps": 2})
		if err != nil {
			t.Fatal(err)
		}
		req := envs.ResetRequest{Seeds: []int64{seed, 3}, Options: opts}
		if perCopy {
			req = envs.ResetRequest{PerCopy: []map[string]any{opts, {keys[1]: lo}}}
		}
		if _, _, err := v.Reset(context.Background(), req); err != nil {
			return
		}
		acts := envs.NewBatch(v.ActionSpace(), 2)
		for i := range 2 {
			if acts.DType.IsFloat() {
				acts.Floats[i] = fa
			} else {
				acts.Ints[i] = ia
			}
		}
		for range 4 {
			if _, err := v.Step(context.Background(), acts); err != nil {
				return
			}
		}
	})
}
