package classic

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/envs"
)

func seedp(s int64) *int64 { return &s }

// TestBadInput lists misuse that must come back as an error naming the problem, never a panic.
func TestBadInput(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name, id string
		make     map[string]any
		reset    map[string]any
		seed     *int64
		action   any // nil: no step
		noReset  bool
		want     string
	}{
		{name: "unknown id", id: "CartPole-v9", want: "unknown environment id"},
		{name: "unknown make option", id: "CartPole-v1", make: map[string]any{"base": 5}, want: `unknown option "base"`},
		{name: "autoreset on a single env", id: "CartPole-v1", make: map[string]any{"autoreset": "disabled"}, want: `unknown option "autoreset"`},
		{name: "max_episode_steps 0", id: "Pendulum-v1", make: map[string]any{"max_episode_steps": 0}, want: "want >= 1"},
		{name: "max_episode_steps not an int", id: "Pendulum-v1", make: map[string]any{"max_episode_steps": 1.5}, want: "not an integer"},
		{name: "g not a number", id: "Pendulum-v1", make: map[string]any{"g": "ten"}, want: "want a number"},
		{name: "g NaN", id: "Pendulum-v1", make: map[string]any{"g": nan}, want: "finite"},
		{name: "sutton_barto_reward not a bool", id: "CartPole-v1", make: map[string]any{"sutton_barto_reward": 1}, want: "want a bool"},
		{name: "goal_velocity on Acrobot", id: "Acrobot-v1", make: map[string]any{"goal_velocity": 0.1}, want: `unknown option "goal_velocity"`},
		{name: "unknown reset option", id: "CartPole-v1", reset: map[string]any{"lo": -0.1}, want: `unknown option "lo"`},
		{name: "x_init on CartPole", id: "CartPole-v1", reset: map[string]any{"x_init": 1.0}, want: `unknown option "x_init"`},
		{name: "low on Pendulum", id: "Pendulum-v1", reset: map[string]any{"low": 1.0}, want: `unknown option "low"`},
		{name: "low above high", id: "Acrobot-v1", reset: map[string]any{"low": 0.2, "high": 0.1}, want: "must be lower than"},
		{name: "low above default high", id: "MountainCar-v0", reset: map[string]any{"low": 0.0}, want: "must be lower than"},
		{name: "NaN bound", id: "CartPole-v1", reset: map[string]any{"low": nan}, want: "exceeds valid bounds"},
		{name: "infinite bound", id: "MountainCarContinuous-v0", reset: map[string]any{"high": math.Inf(1)}, want: "exceeds valid bounds"},
		{name: "bound not a number", id: "CartPole-v1", reset: map[string]any{"high": "0.1"}, want: "want a number"},
		{name: "negative x_init", id: "Pendulum-v1", reset: map[string]any{"x_init": -1.0}, want: "high - low < 0"},
		{name: "NaN y_init", id: "Pendulum-v1", reset: map[string]any{"y_init": nan}, want: "exceeds valid bounds"},
		{name: "negative seed", id: "CartPole-v1", seed: seedp(-3), want: "non-negative"},
		{name: "step before reset", id: "CartPole-v1", noReset: true, action: int64(0), want: "before reset"},
		{name: "discrete action out of range", id: "CartPole-v1", action: int64(2), want: "out of range [0, 2)"},
		{name: "discrete action negative", id: "Acrobot-v1", action: int64(-1), want: "out of range [0, 3)"},
		{name: "discrete action of the wrong type", id: "MountainCar-v0", action: 1.0, want: "want an int64"},
		{name: "NaN torque", id: "Pendulum-v1", action: []float64{nan}, want: "outside the action space"},
		{name: "torque above the bound", id: "Pendulum-v1", action: []float64{2.0001}, want: "outside the action space"},
		{name: "force below the bound", id: "MountainCarContinuous-v0", action: []float64{-1.5}, want: "outside the action space"},
		{name: "infinite force", id: "MountainCarContinuous-v0", action: []float64{math.Inf(1)}, want: "outside the action space"},
		{name: "Box action of two elements", id: "MountainCarContinuous-v0", action: []float64{0, 0}, want: "one element"},
		{name: "Box action as a scalar", id: "Pendulum-v1", action: 0.5, want: "one element"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := func() error {
				e, err := NewEnv(c.id, c.make)
				if err != nil {
					return err
				}
				if !c.noReset {
					if _, _, err := e.Reset(c.seed, c.reset); err != nil {
						return err
					}
				}
				if c.action != nil {
					_, _, _, _, _, err := e.Step(c.action)
					return err
				}
				return nil
			}()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestStepAfterEnd(t *testing.T) {
	e, err := NewEnv("MountainCar-v0", map[string]any{"max_episode_steps": 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Reset(seedp(1), nil); err != nil {
		t.Fatal(err)
	}
	for k := 1; k <= 3; k++ {
		_, _, term, trunc, _, err := e.Step(int64(1))
		if err != nil || term || trunc != (k == 3) {
			t.Fatalf("step %d: %v %v %v", k, term, trunc, err)
		}
	}
	if _, _, _, _, _, err := e.Step(int64(1)); err == nil || !strings.Contains(err.Error(), "call Reset") {
		t.Fatalf("step after the end: %v", err)
	}
}

// TestVecBadInput checks the VecEnv's request and action checks, and that a rejected request changes
// nothing.
func TestVecBadInput(t *testing.T) {
	ctx := context.Background()
	v, err := NewVecEnv("Pendulum-v1", 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Step(ctx, envs.NewArray(envs.Float32, 3, 1)); err == nil || !strings.Contains(err.Error(), "before reset") {
		t.Fatalf("step before reset: %v", err)
	}
	if _, _, err := v.Reset(ctx, envs.ResetRequest{Mask: []bool{true, false, true}}); err == nil || !strings.Contains(err.Error(), "never reset") {
		t.Fatalf("partial first reset: %v", err)
	}
	obs, _, err := v.Reset(ctx, envs.ResetRequest{Seeds: []int64{1, 2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	before := obs.Clone()
	for _, req := range []envs.ResetRequest{
		{Seeds: []int64{1, 2}},
		{Seeds: []int64{1, -2, 3}},
		{Mask: []bool{true}},
		{PerCopy: []map[string]any{nil, {"x_init": -1.0}, nil}, Seeds: []int64{4, 5, 6}},
		{Options: map[string]any{"low": 0.0}},
	} {
		if _, _, err := v.Reset(ctx, req); err == nil {
			t.Fatalf("request %+v accepted", req)
		}
		if !reflect.DeepEqual(v.obs, before) {
			t.Fatalf("rejected request %+v changed the observations", req)
		}
	}
	acts := envs.NewArray(envs.Float32, 3, 1)
	acts.Floats[2] = math.NaN()
	if _, err := v.Step(ctx, acts); err == nil || !strings.Contains(err.Error(), "copy 2") {
		t.Fatalf("NaN action: %v", err)
	}
	if v.Elapsed(0) != 0 || !reflect.DeepEqual(v.obs, before) {
		t.Fatal("a rejected step moved a copy")
	}
	for _, a := range []envs.Array{envs.NewArray(envs.Int64, 3), envs.NewArray(envs.Float32, 2, 1), {DType: envs.Float32, Shape: []int{3}}} {
		if _, err := v.Step(ctx, a); err == nil {
			t.Fatalf("actions %+v accepted", a)
		}
	}
	d, err := NewVecEnv("CartPole-v1", 2, map[string]any{"autoreset": "sideways"})
	if err == nil || d != nil {
		t.Fatalf("bad autoreset accepted: %v", err)
	}
	d, err = NewVecEnv("CartPole-v1", 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Reset(ctx, envs.ResetRequest{}); err != nil {
		t.Fatal(err)
	}
	for _, a := range []envs.Array{envs.NewArray(envs.Float64, 2), {DType: envs.Int64, Shape: []int{2}, Ints: []int64{0, 5}}} {
		if _, err := d.Step(ctx, a); err == nil {
			t.Fatalf("actions %+v accepted", a)
		}
	}
	if _, err := NewVecEnv("CartPole-v1", 0, nil); err == nil {
		t.Fatal("0 copies accepted")
	}
}

// episode plays one seeded episode of a single Env with actions from rng and returns its
// observations, rewards and final flags.
func playEnv(t *testing.T, id string, seed int64, opts map[string]any, rng *rand.Rand) (obs [][]float64, rewards []float64, term, trunc bool) {
	t.Helper()
	e, err := NewEnv(id, nil)
	if err != nil {
		t.Fatal(err)
	}
	o, _, err := e.Reset(&seed, opts)
	if err != nil {
		t.Fatal(err)
	}
	obs = append(obs, o.([]float64))
	for !term && !trunc {
		var r float64
		o, r, term, trunc, _, err = e.Step(e.ActionSpace().Sample(rng))
		if err != nil {
			t.Fatal(err)
		}
		obs = append(obs, o.([]float64))
		rewards = append(rewards, r)
	}
	return obs, rewards, term, trunc
}

// TestEnvMatchesVecEnv plays the same seeds and actions through single Envs and one VecEnv in
// disabled autoreset mode, and checks the disabled mode's frozen rows after the end.
func TestEnvMatchesVecEnv(t *testing.T) {
	ctx := context.Background()
	for _, id := range IDs() {
		t.Run(id, func(t *testing.T) {
			const n = 5
			v, err := NewVecEnv(id, n, map[string]any{"autoreset": "disabled"})
			if err != nil {
				t.Fatal(err)
			}
			seeds := []int64{0, 1, 2, 1 << 40, 99}
			opts := map[string]any{}
			if id == "Pendulum-v1" {
				opts["x_init"] = 2.0
			}
			if _, _, err := v.Reset(ctx, envs.ResetRequest{Seeds: seeds, Options: opts}); err != nil {
				t.Fatal(err)
			}
			var want [n][][]float64
			var wantR [n][]float64
			var wantEnd [n][2]bool
			for i := range n {
				// The same actions: one generator per copy, drawn in the same order.
				want[i], wantR[i], wantEnd[i][0], wantEnd[i][1] = playEnv(t, id, seeds[i], opts, rand.New(rand.NewPCG(uint64(i), 5)))
			}
			rngs := make([]*rand.Rand, n)
			for i := range rngs {
				rngs[i] = rand.New(rand.NewPCG(uint64(i), 5))
			}
			acts := envs.NewBatch(v.ActionSpace(), n)
			rs := v.obs.RowSize()
			for k := 1; ; k++ {
				all := true
				for i := range n {
					if k < len(want[i]) {
						all = false
						if err := envs.WriteRow(v.ActionSpace(), acts, i, v.ActionSpace().Sample(rngs[i])); err != nil {
							t.Fatal(err)
						}
					}
				}
				if all {
					break
				}
				res, err := v.Step(ctx, acts)
				if err != nil {
					t.Fatal(err)
				}
				for i := range n {
					row := res.Obs.Floats[i*rs : (i+1)*rs]
					last := len(want[i]) - 1
					if k <= last {
						if !reflect.DeepEqual(row, want[i][k]) || res.Rewards[i] != wantR[i][k-1] {
							t.Fatalf("copy %d step %d: %v %v, single env %v %v", i, k, row, res.Rewards[i], want[i][k], wantR[i][k-1])
						}
						if end := k == last; end != (res.Terminated[i] || res.Truncated[i]) {
							t.Fatalf("copy %d step %d: end flags %v %v", i, k, res.Terminated[i], res.Truncated[i])
						}
						continue
					}
					// Ended in disabled mode: the final observation repeats with reward 0 and the end flags.
					if !reflect.DeepEqual(row, want[i][last]) || res.Rewards[i] != 0 || res.Terminated[i] != wantEnd[i][0] || res.Truncated[i] != wantEnd[i][1] {
						t.Fatalf("copy %d step %d after its end: %v %v %v %v", i, k, row, res.Rewards[i], res.Terminated[i], res.Truncated[i])
					}
				}
			}
		})
	}
}

// TestSeeding: a seed reproduces the episode start, nil continues the stream, and a masked reset
// leaves the other copies alone.
func TestSeeding(t *testing.T) {
	ctx := context.Background()
	for _, id := range IDs() {
		e, _ := NewEnv(id, nil)
		a, _, _ := e.Reset(seedp(7), nil)
		b, _, _ := e.Reset(nil, nil)
		c, _, _ := e.Reset(seedp(7), nil)
		if !reflect.DeepEqual(a, c) || reflect.DeepEqual(a, b) {
			t.Fatalf("%s: seeded resets %v %v, continued %v", id, a, c, b)
		}
		v, _ := NewVecEnv(id, 2, nil)
		o, _, _ := v.Reset(ctx, envs.ResetRequest{Seeds: []int64{7, 8}})
		first := o.Clone()
		o, _, _ = v.Reset(ctx, envs.ResetRequest{Mask: []bool{false, true}})
		rs := o.RowSize()
		if !reflect.DeepEqual(o.Floats[:rs], a.([]float64)) || !reflect.DeepEqual(o.Floats[:rs], first.Floats[:rs]) || reflect.DeepEqual(o.Floats[rs:], first.Floats[rs:]) {
			t.Fatalf("%s: masked reset %v after %v", id, o.Floats, first.Floats)
		}
	}
}

// TestZeroAllocs steps every env's VecEnv in both autoreset modes, through episode ends, and
// requires zero allocations per Step.
func TestZeroAllocs(t *testing.T) {
	ctx := context.Background()
	for _, id := range IDs() {
		for _, mode := range []string{"next-step", "disabled"} {
			v, err := NewVecEnv(id, 8, map[string]any{"autoreset": mode, "max_episode_steps": 7})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := v.Reset(ctx, envs.ResetRequest{Seeds: []int64{1, 2, 3, 4, 5, 6, 7, 8}}); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 1))
			acts := envs.NewBatch(v.ActionSpace(), 8)
			for i := range 8 {
				_ = envs.WriteRow(v.ActionSpace(), acts, i, v.ActionSpace().Sample(rng))
			}
			if n := testing.AllocsPerRun(50, func() {
				if _, err := v.Step(ctx, acts); err != nil {
					t.Fatal(err)
				}
			}); n != 0 {
				t.Errorf("%s %s: %v allocs per step", id, mode, n)
			}
		}
	}
}

func TestSpacesAndTimeLimits(t *testing.T) {
	want := map[string]struct {
		obs, act string
		limit    int
	}{
		"CartPole-v1":              {"Box([-4.800000190734863 -Inf -0.41887903213500977 -Inf], [4.800000190734863 +Inf 0.41887903213500977 +Inf], [4], float32)", "Discrete(2)", 500},
		"Acrobot-v1":               {"Box([-1 -1 -1 -1 -12.566370964050293 -28.274333953857422], [1 1 1 1 12.566370964050293 28.274333953857422], [6], float32)", "Discrete(3)", 500},
		"MountainCar-v0":           {"Box([-1.2000000476837158 -0.07000000029802322], [0.6000000238418579 0.07000000029802322], [2], float32)", "Discrete(3)", 200},
		"MountainCarContinuous-v0": {"Box([-1.2000000476837158 -0.07000000029802322], [0.6000000238418579 0.07000000029802322], [2], float32)", "Box(-1, 1, [1], float32)", 999},
		"Pendulum-v1":              {"Box([-1 -1 -8], [1 1 8], [3], float32)", "Box(-2, 2, [1], float32)", 200},
	}
	for _, id := range IDs() {
		e, err := NewEnv(id, nil)
		if err != nil {
			t.Fatal(err)
		}
		w := want[id]
		if e.ObservationSpace().String() != w.obs || e.ActionSpace().String() != w.act || e.MaxEpisodeSteps() != w.limit || MaxEpisodeSteps(id) != w.limit {
			t.Errorf("%s: %v %v %d", id, e.ObservationSpace(), e.ActionSpace(), e.MaxEpisodeSteps())
		}
	}
	if MaxEpisodeSteps("nope") != 0 {
		t.Error("unknown id has a limit")
	}
}

// TestMakeOptions: the gymnasium.make keywords change what Gymnasium's do.
func TestMakeOptions(t *testing.T) {
	e, _ := NewEnv("CartPole-v1", map[string]any{"sutton_barto_reward": true, "max_episode_steps": 1000})
	e.Reset(seedp(3), nil)
	total, steps := 0.0, 0
	for {
		_, r, term, trunc, _, err := e.Step(int64(1))
		if err != nil {
			t.Fatal(err)
		}
		total += r
		steps++
		if term || trunc {
			if !term || total != -1 {
				t.Fatalf("sutton-barto: return %v after %d steps, terminated %v", total, steps, term)
			}
			break
		}
	}
	heavy, _ := NewEnv("Pendulum-v1", map[string]any{"g": 20})
	light, _ := NewEnv("Pendulum-v1", nil)
	opts := map[string]any{"x_init": 1.0, "y_init": 0.0}
	heavy.Reset(seedp(1), opts)
	light.Reset(seedp(1), opts)
	oh, _, _, _, _, _ := heavy.Step([]float64{0})
	ol, _, _, _, _, _ := light.Step([]float64{0})
	if math.Abs(oh.([]float64)[2]) <= math.Abs(ol.([]float64)[2]) {
		t.Fatalf("g=20 swings no faster: %v vs %v", oh, ol)
	}
	mc, _ := NewEnv("MountainCar-v0", map[string]any{"goal_velocity": 0.5})
	mc.Reset(seedp(1), map[string]any{"low": 0.55, "high": 0.55})
	if _, _, term, _, _, _ := mc.Step(int64(2)); term {
		t.Fatal("goal_velocity 0.5 reached")
	}
}
