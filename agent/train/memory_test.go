package train

import (
	"context"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/memory"
	"github.com/sparsepcl/sparsepcl/agent/model/lstm"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// heapPeak runs f and returns the largest heap it held above the heap before it, sampled while it
// runs. The collector runs often (GOGC 20), so the samples are close to the live data.
func heapPeak(t *testing.T, f func()) int64 {
	t.Helper()
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	f()
	close(done)
	wg.Wait()
	return int64(peak) - int64(base)
}

// The estimate is the memory a real run holds, within a factor of 2 either way, for a mid-size
// config of each loop where the per-action arrays dominate: a Copy run at |A| = 8000 whose
// episodes reach --max-steps, and a Pendulum run on an action grid of 6000 points whose replay
// fills up.
func TestMemoryEstimateMatchesTheHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("training runs")
	}
	copyCfg := smallCopyConfig(config.AlgoSparse, 0.05)
	copyCfg.Base, copyCfg.BatchSize, copyCfg.MaxSteps, copyCfg.ReplayCapacity = 2000, 64, 3, 128
	copyCfg.EvalEvery, copyCfg.EvalEpisodes, copyCfg.Iters, copyCfg.CheckpointEvery, copyCfg.StopAtThreshold = 2, 16, 4, 2, false
	pend := config.Default()
	pend.Env, pend.Net, pend.Grid, pend.MLPHidden = "Pendulum-v1", config.NetMLP, 6000, 16
	pend.SubEpisodes, pend.StepsPerIter, pend.ReplaySteps, pend.EvalEvery, pend.Iters, pend.CheckpointEvery = 12, 16, 256, 0, 20, 10
	cases := []struct {
		name     string
		cfg      config.Config
		estimate func(cfg config.Config) memory.Estimate
	}{
		{"Copy |A| = 8000", copyCfg, func(c config.Config) memory.Estimate {
			return memory.EstimateEpisodes(c, lstm.Spec{ObsVocab: 2001, ActionComponents: []int{2, 2, 2000}})
		}},
		{"Pendulum grid 6000", pend, func(c config.Config) memory.Estimate { return memory.EstimateSteps(c, 3, 6000) }},
	}
	for _, tc := range cases {
		var sum Summary
		var err error
		peak := heapPeak(t, func() {
			sum, err = Run(context.Background(), tc.cfg, Options{Dir: t.TempDir(), Registry: registry.Default(), Engine: tensor.GonumEngine(), Logger: quietLogger()})
		})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		est := tc.estimate(sum.Config).Total()
		ratio := float64(peak) / float64(est)
		t.Logf("%s: heap peak %s, estimate %s (ratio %.2f)", tc.name, memory.FormatBytes(peak), memory.FormatBytes(est), ratio)
		if ratio < 0.5 || ratio > 2 {
			t.Errorf("%s: the heap peaked at %s, the estimate is %s: off by more than a factor of 2", tc.name, memory.FormatBytes(peak), memory.FormatBytes(est))
		}
	}
}
