package bridge

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
)

// randomInput draws an explicit input for task t in the form both implementations accept.
func randomInput(rng *rand.Rand, t algorithmic.Task, base int64) any {
	l := 1 + rng.IntN(6)
	if t.Grid() {
		cols := make([][]int64, l)
		for x := range cols {
			cols[x] = make([]int64, t.Rows())
			for y := range cols[x] {
				cols[x][y] = rng.Int64N(base)
			}
		}
		return cols
	}
	if t == algorithmic.DuplicatedInput {
		in := make([]int64, 0, 2*l)
		for range l {
			c := rng.Int64N(base)
			in = append(in, c, c)
		}
		return in
	}
	in := make([]int64, l)
	for i := range in {
		in[i] = rng.Int64N(base)
	}
	return in
}

// TestAlgorithmicParity runs every task, at several bases, in Go and in the Python server with the same
// inputs and actions, and requires identical observations, rewards and end flags.
func TestAlgorithmicParity(t *testing.T) {
	needServer(t)
	srv, err := StartServer(testCtx(t, 60*time.Second), ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	const n, episodes, maxSteps = 4, 4, 60
	for _, task := range algorithmic.Tasks() {
		for _, base := range []int{2, task.DefaultBase(), 7} {
			t.Run(fmt.Sprintf("%s/base%d", task.ID(), base), func(t *testing.T) {
				ctx := testCtx(t, 30*time.Second)
				goEnv, err := algorithmic.NewVecEnv(algorithmic.Config{Task: task, Base: base, FactoredActions: true, Autoreset: envs.AutoresetDisabled}, n)
				if err != nil {
					t.Fatal(err)
				}
				py, err := Dial(ctx, Config{EnvID: task.ID(), Kwargs: map[string]any{"base": base}, NumEnvs: n, Autoreset: envs.AutoresetDisabled}, srv.Endpoint)
				if err != nil {
					t.Fatal(err)
				}
				defer py.Close()
				if goEnv.ActionSpace().String() != py.ActionSpace().String() || goEnv.ObservationSpace().String() != py.ObservationSpace().String() {
					t.Fatalf("spaces differ: go %v %v, python %v %v", goEnv.ObservationSpace(), goEnv.ActionSpace(), py.ObservationSpace(), py.ActionSpace())
				}
				rng := rand.New(rand.NewPCG(uint64(base), uint64(task)))
				moves := py.ActionSpace().(envs.Tuple).Spaces[0].(envs.Discrete).N
				steps := 0
				for ep := range episodes {
					req := envs.ResetRequest{PerCopy: make([]map[string]any, n)}
					for i := range n {
						req.PerCopy[i] = map[string]any{"input": randomInput(rng, task, int64(base))}
					}
					gObs, _, err := goEnv.Reset(ctx, req)
					if err != nil {
						t.Fatal(err)
					}
					gObs = gObs.Clone()
					pObs, _, err := py.Reset(ctx, req)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(gObs.Ints, pObs.Ints) {
						t.Fatalf("episode %d reset obs: go %v python %v", ep, gObs.Ints, pObs.Ints)
					}
					act := envs.NewBatch(py.ActionSpace(), n)
					for s := range maxSteps {
						for i := range n {
							act.Ints[3*i] = rng.Int64N(moves)
							act.Ints[3*i+1] = int64(rng.IntN(3) / 2) // write a third of the time
							act.Ints[3*i+2] = rng.Int64N(int64(base))
							if tg := goEnv.Target(i); rng.IntN(4) > 0 && len(tg) > 0 && tg[0] < int64(base) {
								act.Ints[3*i+2] = min(tg[rng.IntN(len(tg))], int64(base)-1)
							}
						}
						g, err := goEnv.Step(ctx, act)
						if err != nil {
							t.Fatal(err)
						}
						p, err := py.Step(ctx, act)
						if err != nil {
							t.Fatal(err)
						}
						steps++
						if !slices.Equal(g.Obs.Ints, p.Obs.Ints) || !slices.Equal(g.Rewards, p.Rewards) || !slices.Equal(g.Terminated, p.Terminated) || !slices.Equal(g.Truncated, p.Truncated) {
							t.Fatalf("episode %d step %d actions %v:\ngo     %v %v %v %v\npython %v %v %v %v", ep, s, act.Ints,
								g.Obs.Ints, g.Rewards, g.Terminated, g.Truncated, p.Obs.Ints, p.Rewards, p.Terminated, p.Truncated)
						}
						if !slices.Contains(p.Terminated, false) {
							break
						}
					}
				}
				if steps < episodes {
					t.Fatalf("only %d steps compared", steps)
				}
			})
		}
	}
}
