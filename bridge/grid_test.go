package bridge

import (
	"strconv"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/wrappers"
)

// TestHalfCheetahActionGrid drives HalfCheetah-v5 over the bridge through the Go-side action grid (3 and
// 5 points per dimension: 729 and 15,625 actions) and checks each step against the same Box points sent
// directly, from the same seeds.
func TestHalfCheetahActionGrid(t *testing.T) {
	needServer(t)
	srv, err := StartServer(testCtx(t, 60*time.Second), ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	const n = 3
	for _, tc := range []struct {
		k    int
		size int64
	}{{3, 729}, {5, 15625}} {
		t.Run(strconv.Itoa(tc.k), func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			cfg := Config{EnvID: "HalfCheetah-v5", NumEnvs: n, Seeds: []int64{1, 2, 3}}
			raw, err := Dial(ctx, cfg, srv.Endpoint)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			inner, err := Dial(ctx, cfg, srv.Endpoint)
			if err != nil {
				t.Fatal(err)
			}
			defer inner.Close()
			grid, err := wrappers.DiscretizeVecActions(inner, tc.k)
			if err != nil {
				t.Fatal(err)
			}
			if got := grid.ActionSpace(); got.(envs.Discrete).N != tc.size {
				t.Fatalf("grid action space %v, want Discrete(%d)", got, tc.size)
			}
			for _, e := range []envs.VecEnv{raw, grid} {
				if _, _, err := e.Reset(ctx, envs.ResetRequest{}); err != nil {
					t.Fatal(err)
				}
			}
			idx := envs.NewBatch(grid.ActionSpace(), n)
			box := envs.NewBatch(raw.ActionSpace(), n)
			for step := range 20 {
				for i := range n {
					idx.Ints[i] = int64(step*7919+i*104729) % tc.size
					if err := grid.Grid.Point(idx.Ints[i], box.Floats[i*6:(i+1)*6]); err != nil {
						t.Fatal(err)
					}
				}
				want, err := raw.Step(ctx, box)
				if err != nil {
					t.Fatal(err)
				}
				wantObs := append([]float64(nil), want.Obs.Floats...)
				wantRew := append([]float64(nil), want.Rewards...)
				got, err := grid.Step(ctx, idx)
				if err != nil {
					t.Fatal(err)
				}
				if !sameBits(got.Obs.Floats, wantObs) || !sameBits(got.Rewards, wantRew) {
					t.Fatalf("step %d: grid actions %v differ from their Box points %v", step, idx.Ints, box.Floats)
				}
			}
		})
	}
}
