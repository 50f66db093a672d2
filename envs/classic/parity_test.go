package classic_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/bridge"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/classic"
)

var (
	serverOnce sync.Once
	server     *bridge.Server
	serverErr  error
)

// pythonServer starts one Python server for the whole test binary (stopped by TestMain). Without
// one the test is skipped, or fails under CI=true.
func pythonServer(t *testing.T) *bridge.Server {
	t.Helper()
	serverOnce.Do(func() {
		// The server lives as long as this context: TestMain stops it.
		server, serverErr = bridge.StartServer(context.Background(), bridge.ServerOptions{StartTimeout: 90 * time.Second})
	})
	if serverErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python server unavailable (set SPARSEPCL_PYTHON): %v", serverErr)
		}
		t.Skipf("python server unavailable (set SPARSEPCL_PYTHON): %v", serverErr)
	}
	if !classic.LibmIdentical {
		t.Skip("built without cgo: the dynamics use Go's math, not the C library's, and are not bit-identical")
	}
	return server
}

func TestMain(m *testing.M) {
	code := m.Run()
	if server != nil {
		server.Close()
	}
	os.Exit(code)
}

// policy picks the actions of every copy from the current observations.
type policy func(rng *rand.Rand, obs envs.Array, act envs.Array)

// randomPolicy draws uniform actions; for a Box it also plays the bounds and 0 exactly now and then.
func randomPolicy(space envs.Space) policy {
	return func(rng *rand.Rand, _ envs.Array, act envs.Array) {
		switch s := space.(type) {
		case envs.Discrete:
			for i := range act.Ints {
				act.Ints[i] = rng.Int64N(s.N)
			}
		case envs.Box:
			for i := range act.Floats {
				switch k := rng.IntN(20); k {
				case 0:
					act.Floats[i] = s.Low[0]
				case 1:
					act.Floats[i] = s.High[0]
				case 2:
					act.Floats[i] = 0
				default:
					act.Floats[i] = s.Low[0] + rng.Float64()*(s.High[0]-s.Low[0])
				}
			}
		}
	}
}

// scriptedPolicy is a simple controller per env that reaches the ends random play rarely sees:
// CartPole balanced to its TimeLimit, Acrobot, both MountainCars swung up to the goal, Pendulum
// pushed with saturating torques.
func scriptedPolicy(id string) policy {
	return func(rng *rand.Rand, obs envs.Array, act envs.Array) {
		rs := obs.RowSize()
		for i := range obs.Rows() {
			o := obs.Floats[i*rs : (i+1)*rs]
			switch id {
			case "CartPole-v1":
				act.Ints[i] = 0
				if o[2]+0.5*o[3]+0.01*o[0]+0.1*o[1] > 0 {
					act.Ints[i] = 1
				}
			case "Acrobot-v1":
				// Torque along the second joint's velocity pumps energy in: most episodes end at the goal.
				act.Ints[i] = 1
				if o[5] > 0.01 {
					act.Ints[i] = 2
				} else if o[5] < -0.01 {
					act.Ints[i] = 0
				}
			case "MountainCar-v0":
				act.Ints[i] = 0
				if o[1] >= 0 {
					act.Ints[i] = 2
				}
			case "MountainCarContinuous-v0":
				act.Floats[i] = -1
				if o[1] >= 0 {
					act.Floats[i] = 1 - 0.3*rng.Float64()
				}
			case "Pendulum-v1":
				th := math.Atan2(o[1], o[0])
				act.Floats[i] = math.Max(-2, math.Min(2, -(8*th+1.5*o[2])))
			}
		}
	}
}

func newActions(space envs.Space, n int) envs.Array { return envs.NewBatch(space, n) }

// compareStep fails at the first difference between the Go and the Python results, bit for bit.
func compareStep(t *testing.T, what string, step int, gObs, pObs envs.Array, g, p *envs.StepResult) {
	t.Helper()
	rs := gObs.RowSize()
	for i := range gObs.Floats {
		if math.Float64bits(gObs.Floats[i]) != math.Float64bits(pObs.Floats[i]) {
			t.Fatalf("%s step %d copy %d: observation %v, gymnasium %v", what, step, i/rs, gObs.Floats[i/rs*rs:(i/rs+1)*rs], pObs.Floats[i/rs*rs:(i/rs+1)*rs])
		}
	}
	if g == nil {
		return
	}
	for i := range g.Rewards {
		if math.Float64bits(g.Rewards[i]) != math.Float64bits(p.Rewards[i]) {
			t.Fatalf("%s step %d copy %d: reward %v, gymnasium %v", what, step, i, g.Rewards[i], p.Rewards[i])
		}
		if g.Terminated[i] != p.Terminated[i] || g.Truncated[i] != p.Truncated[i] {
			t.Fatalf("%s step %d copy %d: terminated/truncated %v/%v, gymnasium %v/%v", what, step, i, g.Terminated[i], g.Truncated[i], p.Terminated[i], p.Truncated[i])
		}
	}
}

// resetOptions are per-copy reset options exercising Gymnasium's "low"/"high" (or Pendulum's
// "x_init"/"y_init") on every third copy.
func resetOptions(id string, n int) []map[string]any {
	per := make([]map[string]any, n)
	for i := range per {
		switch {
		case i%3 != 0:
		case id == "Pendulum-v1":
			per[i] = map[string]any{"x_init": 0.5 + float64(i%5), "y_init": 0.25 * float64(i%4)}
		case id == "MountainCar-v0" || id == "MountainCarContinuous-v0":
			per[i] = map[string]any{"low": -1.1, "high": -0.2 + 0.01*float64(i%7)}
		default:
			per[i] = map[string]any{"low": -0.2, "high": 0.05 * float64(i%5)}
		}
	}
	return per
}

// TestParityWholeEpisodes plays, for every env and for a random and a scripted policy, 100 seeded
// copies through two whole episodes each (the first from the seed with default bounds, the second
// continuing each copy's stream with reset options on every third copy) in Go and in Gymnasium (the
// Python server), and requires bit-identical observations and rewards and the same terminated and
// truncated flags at every step.
func TestParityWholeEpisodes(t *testing.T) {
	srv := pythonServer(t)
	const n = 100
	for _, id := range classic.IDs() {
		for pi, pname := range []string{"random", "scripted"} {
			t.Run(id+"/"+pname, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				defer cancel()
				goEnv, err := classic.NewVecEnv(id, n, map[string]any{"autoreset": "disabled"})
				if err != nil {
					t.Fatal(err)
				}
				py, err := bridge.Dial(ctx, bridge.Config{EnvID: id, NumEnvs: n, Autoreset: envs.AutoresetDisabled}, srv.Endpoint)
				if err != nil {
					t.Fatal(err)
				}
				defer py.Close()
				if !reflect.DeepEqual(goEnv.ObservationSpace(), py.ObservationSpace()) || !reflect.DeepEqual(goEnv.ActionSpace(), py.ActionSpace()) {
					t.Fatalf("spaces: go %#v %#v, gymnasium %#v %#v", goEnv.ObservationSpace(), goEnv.ActionSpace(), py.ObservationSpace(), py.ActionSpace())
				}
				pol := randomPolicy(goEnv.ActionSpace())
				if pname == "scripted" {
					pol = scriptedPolicy(id)
				}
				rng := rand.New(rand.NewPCG(uint64(len(id)), uint64(pi)))
				seeds := make([]int64, n)
				for i := range seeds {
					seeds[i] = int64(1000*pi + 7*i)
				}
				acts := newActions(goEnv.ActionSpace(), n)
				steps, ends := 0, [2]int{}
				for ep, req := range []envs.ResetRequest{{Seeds: seeds}, {PerCopy: resetOptions(id, n)}} {
					gObs, _, err := goEnv.Reset(ctx, req)
					if err != nil {
						t.Fatal(err)
					}
					pObs, _, err := py.Reset(ctx, req)
					if err != nil {
						t.Fatal(err)
					}
					what := fmt.Sprintf("episode %d", ep)
					compareStep(t, what+" reset", 0, gObs, pObs, nil, nil)
					done := make([]bool, n)
					for k := 1; ; k++ {
						pol(rng, gObs, acts)
						g, err := goEnv.Step(ctx, acts)
						if err != nil {
							t.Fatal(err)
						}
						p, err := py.Step(ctx, acts)
						if err != nil {
							t.Fatal(err)
						}
						compareStep(t, what, k, g.Obs, p.Obs, &g, &p)
						all := true
						for i := range done {
							if !done[i] {
								steps++
								if g.Terminated[i] {
									ends[0]++
								} else if g.Truncated[i] {
									ends[1]++
								}
							}
							done[i] = done[i] || g.Terminated[i] || g.Truncated[i]
							all = all && done[i]
						}
						if all {
							break
						}
						if k > goEnv.MaxEpisodeSteps() {
							t.Fatalf("%s: copies still running after %d steps", what, k)
						}
					}
				}
				t.Logf("%d seeds x 2 episodes, %d steps compared, %d terminated, %d truncated", n, steps, ends[0], ends[1])
			})
		}
	}
}

// TestParityNextStepAutoreset runs 16 copies in next-step autoreset mode for more steps than an
// episode lasts, so copies reset themselves mid-run from their continuing streams, and compares
// every step.
func TestParityNextStepAutoreset(t *testing.T) {
	srv := pythonServer(t)
	const n = 16
	for _, id := range classic.IDs() {
		t.Run(id, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			goEnv, err := classic.NewVecEnv(id, n, map[string]any{"max_episode_steps": 60})
			if err != nil {
				t.Fatal(err)
			}
			py, err := bridge.Dial(ctx, bridge.Config{EnvID: id, Kwargs: map[string]any{"max_episode_steps": 60}, NumEnvs: n}, srv.Endpoint)
			if err != nil {
				t.Fatal(err)
			}
			defer py.Close()
			seeds := make([]int64, n)
			for i := range seeds {
				seeds[i] = int64(1 << (i + 20))
			}
			gObs, _, err := goEnv.Reset(ctx, envs.ResetRequest{Seeds: seeds})
			if err != nil {
				t.Fatal(err)
			}
			pObs, _, err := py.Reset(ctx, envs.ResetRequest{Seeds: seeds})
			if err != nil {
				t.Fatal(err)
			}
			compareStep(t, "reset", 0, gObs, pObs, nil, nil)
			rng := rand.New(rand.NewPCG(9, uint64(len(id))))
			pol := randomPolicy(goEnv.ActionSpace())
			acts := newActions(goEnv.ActionSpace(), n)
			resets := 0
			for k := 1; k <= 200; k++ {
				pol(rng, gObs, acts)
				g, err := goEnv.Step(ctx, acts)
				if err != nil {
					t.Fatal(err)
				}
				p, err := py.Step(ctx, acts)
				if err != nil {
					t.Fatal(err)
				}
				compareStep(t, "next-step", k, g.Obs, p.Obs, &g, &p)
				for i := range n {
					if goEnv.Elapsed(i) == 0 {
						resets++
					}
				}
			}
			if resets < n {
				t.Fatalf("only %d autoresets", resets)
			}
		})
	}
}

// TestParityMakeOptions repeats the whole-episode comparison with gymnasium.make keywords: 20 seeds
// per env, scripted actions.
func TestParityMakeOptions(t *testing.T) {
	srv := pythonServer(t)
	const n = 20
	for _, c := range []struct {
		id     string
		kwargs map[string]any
	}{
		{"CartPole-v1", map[string]any{"sutton_barto_reward": true, "max_episode_steps": 300}},
		{"MountainCar-v0", map[string]any{"goal_velocity": 0.01}},
		{"MountainCarContinuous-v0", map[string]any{"goal_velocity": 0.02}},
		{"Pendulum-v1", map[string]any{"g": 9.81}},
		{"Acrobot-v1", map[string]any{"max_episode_steps": 120}},
	} {
		t.Run(c.id, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			opts := map[string]any{"autoreset": "disabled"}
			for k, v := range c.kwargs {
				opts[k] = v
			}
			goEnv, err := classic.NewVecEnv(c.id, n, opts)
			if err != nil {
				t.Fatal(err)
			}
			py, err := bridge.Dial(ctx, bridge.Config{EnvID: c.id, Kwargs: c.kwargs, NumEnvs: n, Autoreset: envs.AutoresetDisabled}, srv.Endpoint)
			if err != nil {
				t.Fatal(err)
			}
			defer py.Close()
			seeds := make([]int64, n)
			for i := range seeds {
				seeds[i] = int64(500 + i)
			}
			gObs, _, err := goEnv.Reset(ctx, envs.ResetRequest{Seeds: seeds})
			if err != nil {
				t.Fatal(err)
			}
			pObs, _, err := py.Reset(ctx, envs.ResetRequest{Seeds: seeds})
			if err != nil {
				t.Fatal(err)
			}
			compareStep(t, "reset", 0, gObs, pObs, nil, nil)
			pol := scriptedPolicy(c.id)
			rng := rand.New(rand.NewPCG(3, 4))
			acts := newActions(goEnv.ActionSpace(), n)
			for k := 1; k <= goEnv.MaxEpisodeSteps(); k++ {
				pol(rng, gObs, acts)
				g, err := goEnv.Step(ctx, acts)
				if err != nil {
					t.Fatal(err)
				}
				p, err := py.Step(ctx, acts)
				if err != nil {
					t.Fatal(err)
				}
				compareStep(t, "make options", k, g.Obs, p.Obs, &g, &p)
			}
		})
	}
}
