package classic_test

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/bridge"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/classic"
)

// pythonBatches is how many batches of 16 copies the in-process Python loop steps per env: about
// a second each on the project's machine.
var pythonBatches = map[string]int{
	"CartPole-v1": 4000, "Acrobot-v1": 600, "MountainCar-v0": 3000, "MountainCarContinuous-v0": 2500, "Pendulum-v1": 2000,
}

// pythonRate runs `python -m python_server.reference bench --mode loop`: 16 copies of the
// Gymnasium env made with gymnasium.make (TimeLimit and checker wrappers included) stepped
// in-process in a bare loop with random actions drawn up front, next-step autoreset. It returns
// env-steps/s, or 0 when Python cannot be run here.
func pythonRate(b *testing.B, id string) float64 {
	root, err := bridge.FindRoot()
	if err != nil {
		b.Logf("no python loop: %v", err)
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bridge.FindPython(root), "-m", "python_server.reference", "bench",
		"--env", id, "--n", "16", "--steps", strconv.Itoa(pythonBatches[id]), "--mode", "loop")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PYTHONPATH="+root)
	out, err := cmd.Output()
	if err != nil {
		b.Logf("no python loop: %v", err)
		return 0
	}
	var res struct {
		StepsPerSecond float64 `json:"steps_per_second"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		b.Logf("python loop printed %q: %v", out, err)
		return 0
	}
	return res.StepsPerSecond
}

// BenchmarkVecEnv steps a VecEnv of 256 copies of each env on one goroutine, next-step autoreset
// (so resets are included), with 64 batches of uniformly random actions drawn before the timed loop.
// One op is one Step of all 256 copies: allocs/op is allocations per batched step. Metrics:
// env-steps/s of the Go VecEnv, python-env-steps/s of Gymnasium's in-process loop measured right
// before and right after it in the same run (their geometric mean, so that a load that drifts
// during the run weighs on both sides alike), and x-python, the ratio of the two.
func BenchmarkVecEnv(b *testing.B) {
	const n, batches = 256, 64
	for _, id := range classic.IDs() {
		b.Run(id, func(b *testing.B) {
			ctx := context.Background()
			v, err := classic.NewVecEnv(id, n, nil)
			if err != nil {
				b.Fatal(err)
			}
			seeds := make([]int64, n)
			for i := range seeds {
				seeds[i] = int64(i)
			}
			if _, _, err := v.Reset(ctx, envs.ResetRequest{Seeds: seeds}); err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			acts := make([]envs.Array, batches)
			for k := range acts {
				acts[k] = envs.NewBatch(v.ActionSpace(), n)
				for i := range n {
					if err := envs.WriteRow(v.ActionSpace(), acts[k], i, v.ActionSpace().Sample(rng)); err != nil {
						b.Fatal(err)
					}
				}
			}
			pyBefore := pythonRate(b, id)
			b.ReportAllocs()
			for k := 0; b.Loop(); k++ {
				if _, err := v.Step(ctx, acts[k%batches]); err != nil {
					b.Fatal(err)
				}
			}
			goRate := float64(b.N) * n / b.Elapsed().Seconds()
			b.ReportMetric(goRate, "env-steps/s")
			if pyAfter := pythonRate(b, id); pyBefore > 0 && pyAfter > 0 {
				py := math.Sqrt(pyBefore * pyAfter)
				b.ReportMetric(py, "python-env-steps/s")
				b.ReportMetric(goRate/py, "x-python")
			}
		})
	}
}
