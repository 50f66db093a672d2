package algorithmic

import (
	"context"
	"testing"

	"github.com/sparsepcl/sparsepcl/envs"
)

// FuzzAlgorithmic drives every task with arbitrary bases, explicit inputs (often invalid) and
// actions (often out of range): errors are fine, panics are not, and a valid episode keeps its
// invariants (rewards in {-1, -0.5, 0, 1}, observations in the observation space).
func FuzzAlgorithmic(f *testing.F) {
	f.Add(uint8(0), uint8(5), []byte{1, 2, 3}, []byte{7, 0, 1, 11, 19}, false, int64(1))
	f.Add(uint8(4), uint8(3), []byte{2, 1, 1, 0}, []byte{3, 5, 2, 2, 3, 1, 20}, true, int64(2))
	f.Add(uint8(5), uint8(2), []byte{1, 1, 1, 0, 1, 1}, []byte{0, 1, 3, 3, 3, 13, 2, 6}, false, int64(3))
	f.Add(uint8(1), uint8(5), []byte{3, 3, 0}, []byte{255, 128}, true, int64(-4))
	f.Add(uint8(9), uint8(0), []byte{}, []byte{}, false, int64(0))
	f.Add(uint8(3), uint8(40), []byte{}, []byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, false, int64(5))
	f.Fuzz(func(t *testing.T, taskByte, base uint8, input, actions []byte, useInput bool, seed int64) {
		task := Task(taskByte % 7) // 6 is invalid on purpose
		env, err := NewEnv(Config{Task: task, Base: int(base)})
		if err != nil {
			return
		}
		opts := map[string]any{}
		if useInput {
			if task.Grid() {
				rows := task.Rows()
				cols := make([][]int64, 0, len(input)/rows+1)
				for i := 0; i < len(input); i += rows {
					col := make([]int64, 0, rows)
					for j := i; j < min(i+rows, len(input)); j++ {
						col = append(col, int64(input[j]))
					}
					cols = append(cols, col)
				}
				opts[OptInput] = cols
			} else {
				syms := make([]int64, len(input))
				for i, b := range input {
					syms[i] = int64(b)
				}
				opts[OptInput] = syms
			}
		}
		obs, _, err := env.Reset(&seed, opts)
		if err != nil {
			return
		}
		if err := env.ObservationSpace().Check(obs); err != nil {
			t.Fatal(err)
		}
		v, err := NewVecEnv(Config{Task: task, Base: int(base)}, 2)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, _, err := v.Reset(ctx, envs.ResetRequest{Seeds: []int64{seed, seed + 1}, PerCopy: []map[string]any{opts, nil}}); err != nil {
			t.Fatalf("vec reset with an input the single env accepted: %v", err)
		}
		act := envs.NewArray(envs.Int64, 2)
		ended := false
		for i, b := range actions {
			a := int64(b) - 8
			if !ended {
				o, r, term, _, _, err := env.Step(a)
				if err == nil {
					if r != 0 && r != 1 && r != -0.5 && r != -1 {
						t.Fatalf("reward %v", r)
					}
					if err := env.ObservationSpace().Check(o); err != nil {
						t.Fatal(err)
					}
					ended = term
				}
			}
			act.Ints[0], act.Ints[1] = a, int64(i)
			if res, err := v.Step(ctx, act); err == nil {
				for _, o := range res.Obs.Ints {
					if o < 0 || o > int64(v.Base()) {
						t.Fatalf("obs %d", o)
					}
				}
			}
			_ = env.Render()
			_ = v.Render(0)
		}
	})
}
