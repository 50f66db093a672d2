package bridge

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/envs"
)

// TestSpacesRoundTrip serves python_server.testing_envs:SpacesEnv (every space kind) and checks the
// descriptors, an action going out and coming back in the observation, and info conversion.
func TestSpacesRoundTrip(t *testing.T) {
	e := startEnv(t, Config{EnvID: "python_server.testing_envs:SpacesEnv", NumEnvs: 2, Infos: true}, 1, ServerOptions{AllowImports: true})
	inf := math.Inf(1)
	wantObs := envs.Dict{Spaces: map[string]envs.Space{
		"box":  envs.Box{Low: []float64{-inf, 0, -1.5}, High: []float64{inf, inf, 2.5}, Shape: []int{3}, Dtype: envs.Float64},
		"disc": envs.Discrete{N: 5, Start: -2},
		"md":   envs.MultiDiscrete{Nvec: []int64{3, 4}, Start: []int64{1, -1}},
		"mb":   envs.MultiBinary{N: 3},
		"tup":  envs.Tuple{Spaces: []envs.Space{envs.Discrete{N: 2}, envs.NewBox(-1, 1, envs.Float32, 2)}},
	}}
	wantAct := envs.Tuple{Spaces: []envs.Space{
		envs.Discrete{N: 5, Start: -2},
		envs.Box{Low: []float64{-inf, 0}, High: []float64{1, inf}, Shape: []int{2}, Dtype: envs.Float32},
		envs.MultiDiscrete{Nvec: []int64{3, 4}, Start: []int64{1, -1}},
		envs.MultiBinary{N: 3},
	}}
	if e.ObservationSpace().String() != wantObs.String() || e.ActionSpace().String() != wantAct.String() {
		t.Fatalf("spaces:\n%v\n%v\nwant\n%v\n%v", e.ObservationSpace(), e.ActionSpace(), wantObs, wantAct)
	}
	box := e.ObservationSpace().(envs.Dict).Spaces["box"].(envs.Box)
	if !math.IsInf(box.Low[0], -1) || !math.IsInf(box.High[1], 1) {
		t.Fatalf("infinite bounds lost: %v", box)
	}
	ctx := testCtx(t, 20*time.Second)
	_, infos, err := e.Reset(ctx, envs.ResetRequest{Seeds: []int64{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if infos[1]["seed"] != int8(1) && infos[1]["seed"] != int64(1) {
		t.Errorf("info seed %T %v", infos[1]["seed"], infos[1]["seed"])
	}
	if a, ok := infos[0]["arr"].(envs.Array); !ok || a.DType != envs.Float32 || !slices.Equal(a.Floats, []float64{0, 1, 2}) {
		t.Errorf("info array %#v", infos[0]["arr"])
	}
	if infos[0]["ok"] != true {
		t.Errorf("info bool %#v", infos[0]["ok"])
	}
	// Action: (disc, box[2] float32, md[2], mb[3]) flattened to float64 (mixed dtypes).
	act := envs.NewBatch(e.ActionSpace(), 2)
	rows := [][]any{
		{int64(2), []float64{-1e30, 0.5}, []int64{3, 2}, []int64{1, 0, 1}},
		{int64(-2), []float64{1, 1e30}, []int64{1, -1}, []int64{0, 0, 0}},
	}
	for i, r := range rows {
		if err := envs.WriteRow(e.ActionSpace(), act, i, r); err != nil {
			t.Fatal(err)
		}
	}
	res, err := e.Step(ctx, act)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		v, err := envs.ReadRow(e.ObservationSpace(), res.Obs, i)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.ObservationSpace().Check(v); err != nil {
			t.Fatalf("copy %d: %v", i, err)
		}
		m := v.(map[string]any)
		b := r[1].([]float64)
		if m["disc"] != r[0] || !slices.Equal(m["md"].([]int64), r[2].([]int64)) || !slices.Equal(m["mb"].([]int64), r[3].([]int64)) ||
			!slices.Equal(m["box"].([]float64), []float64{float64(float32(b[0])), float64(float32(b[1])), 2.5}) {
			t.Errorf("copy %d: obs %v from action %v", i, m, r)
		}
		if res.Rewards[i] != 1 {
			t.Errorf("copy %d reward %v", i, res.Rewards[i])
		}
	}
}

// TestAutoresetModes checks both modes on Copy-v0 with explicit inputs: the ending step keeps its final
// observation; next-step resets on the following step (reward 0, flags false); disabled repeats the
// final row until a masked reset.
func TestAutoresetModes(t *testing.T) {
	needServer(t)
	srv, err := StartServer(testCtx(t, 60*time.Second), ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ctx := testCtx(t, 20*time.Second)
	// base 3; copy 0 input [2] (written correctly: ends with +1), copy 1 input [1, 2] (stays running).
	in := []map[string]any{{"input": []int64{2}}, {"input": []int64{1, 2}}}
	// Action: move right (1), write (1), char 2 for copy 0; copy 1 moves right without writing.
	act := envs.Array{DType: envs.Int64, Shape: []int{2, 3}, Ints: []int64{1, 1, 2, 1, 0, 0}}
	for _, mode := range []envs.AutoresetMode{envs.AutoresetNextStep, envs.AutoresetDisabled} {
		e, err := Dial(ctx, Config{EnvID: "Copy-v0", Kwargs: map[string]any{"base": 3}, NumEnvs: 2, Autoreset: mode}, srv.Endpoint)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		obs, _, err := e.Reset(ctx, envs.ResetRequest{PerCopy: in})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(obs.Ints, []int64{2, 1}) {
			t.Fatalf("%v: reset obs %v", mode, obs.Ints)
		}
		r, err := e.Step(ctx, act)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.Obs.Ints, []int64{3, 2}) || r.Rewards[0] != 1 || !r.Terminated[0] || r.Terminated[1] {
			t.Fatalf("%v: ending step %v %v %v", mode, r.Obs.Ints, r.Rewards, r.Terminated)
		}
		r, err = e.Step(ctx, act)
		if err != nil {
			t.Fatal(err)
		}
		switch mode {
		case envs.AutoresetNextStep: // copy 0 reset to a drawn input: obs is a symbol, reward 0, flags false
			if r.Obs.Ints[0] >= 3 || r.Rewards[0] != 0 || r.Terminated[0] || r.Truncated[0] {
				t.Fatalf("next-step: %v %v %v", r.Obs.Ints, r.Rewards, r.Terminated)
			}
		case envs.AutoresetDisabled: // copy 0 frozen: final obs repeated, reward 0, still terminated
			if r.Obs.Ints[0] != 3 || r.Rewards[0] != 0 || !r.Terminated[0] {
				t.Fatalf("disabled: %v %v %v", r.Obs.Ints, r.Rewards, r.Terminated)
			}
			obs, _, err := e.Reset(ctx, envs.ResetRequest{Mask: []bool{true, false}, PerCopy: []map[string]any{{"input": []int64{0}}, nil}})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(obs.Ints, []int64{0, 3}) {
				t.Fatalf("masked reset: %v, want [0 3] (copy 1 untouched, off the tape)", obs.Ints)
			}
		}
	}
}
