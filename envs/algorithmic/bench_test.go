package algorithmic

import (
	"context"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/sparsepcl/sparsepcl/envs"
)

// BenchmarkVecEnvCopy400 steps 400 copies of Copy-v0 (base 5, next-step autoreset) with uniformly
// random actions drawn before the timed loop. One op is one Step of all 400 copies; the metrics are
// env-steps/s (copies stepped per second on this one goroutine) and allocs/step.
func BenchmarkVecEnvCopy400(b *testing.B) {
	const n, batches = 400, 256
	ctx := context.Background()
	v, err := NewVecEnv(Config{Task: Copy, Base: 5}, n)
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
		acts[k] = envs.NewArray(envs.Int64, n)
		for i := range acts[k].Ints {
			acts[k].Ints[i] = rng.Int64N(20)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for k := 0; b.Loop(); k++ {
		if _, err := v.Step(ctx, acts[k%batches]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	steps := float64(b.N) * n
	b.ReportMetric(steps/b.Elapsed().Seconds(), "env-steps/s")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/steps, "allocs/step")
}
