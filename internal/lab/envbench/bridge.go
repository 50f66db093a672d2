package envbench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/sparsepcl/sparsepcl/bridge"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
)

// bridgeRunner is a bridged VecEnv kept open across measurement rounds, with 16 batches of random
// actions drawn up front.
type bridgeRunner struct {
	env     *bridge.VecEnv
	servers int
	acts    []envs.Array
	t       int
}

func newBridgeRunner(ctx context.Context, cfg bridge.Config, servers int, opts bridge.ServerOptions) (*bridgeRunner, error) {
	seeds := make([]int64, cfg.NumEnvs)
	for i := range seeds {
		seeds[i] = int64(i)
	}
	cfg.Seeds = seeds
	e, err := bridge.Start(ctx, cfg, servers, opts)
	if err != nil {
		return nil, err
	}
	b := &bridgeRunner{env: e, servers: servers}
	if _, _, err := e.Reset(ctx, envs.ResetRequest{}); err != nil {
		e.Close()
		return nil, err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b.acts = make([]envs.Array, 16)
	for k := range b.acts {
		b.acts[k] = envs.NewBatch(e.ActionSpace(), cfg.NumEnvs)
		for i := range cfg.NumEnvs {
			if err := envs.WriteRow(e.ActionSpace(), b.acts[k], i, e.ActionSpace().Sample(rng)); err != nil {
				e.Close()
				return nil, err
			}
		}
	}
	return b, nil
}

func (b *bridgeRunner) close() { b.env.Close() }

// measure steps with random actions, keeping `parts` sub-batches in flight (1: lockstep Step; more:
// pipelined, each sub-batch sent again as soon as its results are in, whichever finishes first, so
// no server waits for another and each has its next request early). It returns env-steps/s and the
// transport per batch.
func (b *bridgeRunner) measure(ctx context.Context, steps, parts int) (float64, batchCost, error) {
	n := b.env.NumEnvs()
	if parts < 1 || parts > n {
		return 0, batchCost{}, fmt.Errorf("cannot split %d copies into %d sub-batches", n, parts)
	}
	pending := make([]*bridge.PendingStep, parts)
	sent := make([]int, parts) // batches sent per sub-batch: each uses the action batch of its count
	send := func(j int) (err error) {
		lo, hi := j*n/parts, (j+1)*n/parts
		pending[j], err = b.env.StepAsync(ctx, lo, hi, b.acts[(b.t+sent[j])%len(b.acts)].RowRange(lo, hi))
		sent[j]++
		return err
	}
	defer func() { // leave nothing in flight, even after an error
		for j, p := range pending {
			if p != nil {
				_, _ = p.Wait(ctx)
				pending[j] = nil
			}
		}
		b.t += slices.Max(sent)
	}()
	for j := range parts {
		if err := send(j); err != nil {
			return 0, batchCost{}, err
		}
	}
	warm := max(steps/10, 1) * parts
	var start time.Time
	envSec, serverSec := 0.0, 0.0
	for k := range (steps + max(steps/10, 1)) * parts {
		if k == warm {
			start, envSec, serverSec = time.Now(), 0, 0
		}
		j, _, err := b.env.WaitAny(ctx, pending)
		if j >= 0 {
			pending[j] = nil
		}
		if err != nil {
			return 0, batchCost{}, err
		}
		envSec += b.env.EnvSeconds / float64(b.servers)
		serverSec += b.env.ServerSeconds / float64(b.servers)
		if err := send(j); err != nil {
			return 0, batchCost{}, err
		}
	}
	wall := time.Since(start).Seconds()
	per := float64(steps)
	return float64(steps*n) / wall, batchCost{transport: (wall - envSec) / per, serverWork: (serverSec - envSec) / per}, nil
}

// batchCost is what going through the bridge costs per batch: the wall time less the servers' env
// time (with several servers, their mean), and the part of it that is the servers' own work outside
// env.step (decoding, checks, the per-copy loop); the rest is the round trip.
type batchCost struct{ transport, serverWork float64 }

// ping returns the mean seconds of a ping round trip: the floor under any step's transport.
func (b *bridgeRunner) ping(ctx context.Context, count int) (float64, error) {
	start := time.Now()
	for range count {
		if err := b.env.Ping(ctx); err != nil {
			return 0, err
		}
	}
	return time.Since(start).Seconds() / float64(count) / float64(b.servers), nil
}

// goNativeRate steps the Go-native Copy-v0 with random factored actions.
func goNativeRate(n, steps int) (float64, error) {
	v, err := algorithmic.NewVecEnv(algorithmic.Config{Task: algorithmic.Copy, FactoredActions: true}, n)
	if err != nil {
		return 0, err
	}
	ctx := context.Background()
	if _, _, err := v.Reset(ctx, envs.ResetRequest{}); err != nil {
		return 0, err
	}
	rng := rand.New(rand.NewPCG(3, 4))
	acts := make([]envs.Array, 16)
	for k := range acts {
		acts[k] = envs.NewBatch(v.ActionSpace(), n)
		for i := range n {
			if err := envs.WriteRow(v.ActionSpace(), acts[k], i, v.ActionSpace().Sample(rng)); err != nil {
				return 0, err
			}
		}
	}
	// Batches of `steps` until a quarter of a second has passed: one batch of 64 copies takes about
	// a millisecond, too short for a steady figure.
	start, done := time.Now(), 0
	for done == 0 || time.Since(start) < 250*time.Millisecond {
		for s := range steps {
			if _, err := v.Step(ctx, acts[(done+s)%len(acts)]); err != nil {
				return 0, err
			}
		}
		done += steps
	}
	return float64(done*n) / time.Since(start).Seconds(), nil
}
