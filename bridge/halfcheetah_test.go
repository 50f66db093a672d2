package bridge

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/envs"
)

type trajectory struct {
	N          int        `json:"n"`
	Steps      int        `json:"steps"`
	Seed       int64      `json:"seed"`
	ResetObs   []string   `json:"reset_obs"`
	Obs        [][]string `json:"obs"`
	Rewards    [][]string `json:"rewards"`
	Terminated [][]bool   `json:"terminated"`
	Truncated  [][]bool   `json:"truncated"`
}

// halfCheetahAction is the rule of python_server/reference.py:halfcheetah_action.
func halfCheetahAction(copy, t, dim int) float64 {
	j := (copy*7 + t*3 + dim*5) % 5
	return float64(float32(-1.0 + float64(j)*0.5))
}

func hexFloats(t *testing.T, s string) []float64 {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, len(b)/8)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return out
}

func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// TestHalfCheetahMatchesInProcess steps HalfCheetah-v5 over the bridge (one and two servers) and checks
// every observation and reward bit for bit against in-process Gymnasium, through the truncation at step
// 1000 and the next-step autoreset after it.
func TestHalfCheetahMatchesInProcess(t *testing.T) {
	needServer(t)
	const n, steps, seed = 2, 1003, 7
	out := filepath.Join(t.TempDir(), "ref.json")
	cmd := pythonCmd(t, "-m", "python_server.reference", "trajectory", out, "--n", strconv.Itoa(n), "--steps", strconv.Itoa(steps), "--seed", strconv.Itoa(seed))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("reference trajectory: %v\n%s", err, b)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var ref trajectory
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	for _, servers := range []int{1, 2} {
		t.Run(strconv.Itoa(servers)+"servers", func(t *testing.T) {
			e := startEnv(t, Config{EnvID: "HalfCheetah-v5", NumEnvs: n, Seeds: []int64{seed, seed + 1}}, servers, ServerOptions{})
			ctx := testCtx(t, 60*time.Second)
			if got := e.ActionSpace().String(); got != "Box(-1, 1, [6], float32)" {
				t.Fatalf("action space %s", got)
			}
			obs, _, err := e.Reset(ctx, envs.ResetRequest{})
			if err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if !sameBits(obs.Floats[i*17:(i+1)*17], hexFloats(t, ref.ResetObs[i])) {
					t.Fatalf("reset obs of copy %d differs", i)
				}
			}
			act := envs.NewBatch(e.ActionSpace(), n)
			truncAt := -1
			for step := range steps {
				for i := range n {
					for d := range 6 {
						act.Floats[i*6+d] = halfCheetahAction(i, step, d)
					}
				}
				res, err := e.Step(ctx, act)
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				for i := range n {
					if !sameBits(res.Obs.Floats[i*17:(i+1)*17], hexFloats(t, ref.Obs[step][i])) {
						t.Fatalf("step %d copy %d: obs differs", step, i)
					}
					if !sameBits(res.Rewards[i:i+1], hexFloats(t, ref.Rewards[step][i])) {
						t.Fatalf("step %d copy %d: reward %v differs", step, i, res.Rewards[i])
					}
					if res.Terminated[i] != ref.Terminated[step][i] || res.Truncated[i] != ref.Truncated[step][i] {
						t.Fatalf("step %d copy %d: flags differ", step, i)
					}
					if res.Truncated[i] && truncAt < 0 {
						truncAt = step
					}
				}
			}
			if truncAt != 999 {
				t.Fatalf("first truncation at step index %d, want 999 (the 1000th step)", truncAt)
			}
		})
	}
}
