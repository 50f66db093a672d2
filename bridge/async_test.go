package bridge

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/envs"
)

// TestPipelinedMatchesLockstep: stepping sub-batches with StepAsync and collecting them with WaitAny,
// in whatever order they finish, gives bit for bit what lockstep Step gives for the same seeds and
// actions.
func TestPipelinedMatchesLockstep(t *testing.T) {
	tests := []struct {
		env          string
		n, servers   int
		parts, steps int
	}{
		{"HalfCheetah-v5", 4, 2, 2, 25},
		{"HalfCheetah-v5", 4, 2, 4, 25},
		{"Copy-v0", 6, 1, 3, 40},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d-servers/%d-parts", tt.env, tt.servers, tt.parts), func(t *testing.T) {
			seeds := make([]int64, tt.n)
			for i := range seeds {
				seeds[i] = int64(100 + i)
			}
			cfg := Config{EnvID: tt.env, NumEnvs: tt.n, Seeds: seeds}
			lock := startEnv(t, cfg, tt.servers, ServerOptions{})
			pipe := startEnv(t, cfg, tt.servers, ServerOptions{})
			ctx := testCtx(t, 60*time.Second)
			o1, _, err := lock.Reset(ctx, envs.ResetRequest{})
			if err != nil {
				t.Fatal(err)
			}
			o2, _, err := pipe.Reset(ctx, envs.ResetRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(o1.Floats, o2.Floats) || !slices.Equal(o1.Ints, o2.Ints) {
				t.Fatal("reset observations differ")
			}
			rng := rand.New(rand.NewPCG(5, 6))
			acts := envs.NewBatch(lock.ActionSpace(), tt.n)
			pending := make([]*PendingStep, tt.parts)
			for step := range tt.steps {
				for i := range tt.n {
					if err := envs.WriteRow(lock.ActionSpace(), acts, i, lock.ActionSpace().Sample(rng)); err != nil {
						t.Fatal(err)
					}
				}
				want, err := lock.Step(ctx, acts)
				if err != nil {
					t.Fatal(err)
				}
				for j := range tt.parts {
					lo, hi := j*tt.n/tt.parts, (j+1)*tt.n/tt.parts
					if pending[j], err = pipe.StepAsync(ctx, lo, hi, acts.RowRange(lo, hi)); err != nil {
						t.Fatal(err)
					}
				}
				var got envs.StepResult
				for range tt.parts {
					j, res, err := pipe.WaitAny(ctx, pending)
					if err != nil {
						t.Fatal(err)
					}
					if pending[j] == nil {
						t.Fatalf("WaitAny returned sub-batch %d twice", j)
					}
					pending[j], got = nil, res
				}
				if !slices.Equal(got.Obs.Floats, want.Obs.Floats) || !slices.Equal(got.Obs.Ints, want.Obs.Ints) ||
					!slices.Equal(got.Rewards, want.Rewards) || !slices.Equal(got.Terminated, want.Terminated) || !slices.Equal(got.Truncated, want.Truncated) {
					t.Fatalf("step %d: pipelined result differs from lockstep", step)
				}
			}
		})
	}
}

// TestWaitAnyTakesTheFirstFinished: the sub-batch whose server finishes first comes back first.
func TestWaitAnyTakesTheFirstFinished(t *testing.T) {
	e := startEnv(t, Config{EnvID: "python_server.testing_envs:ActionDelayEnv", NumEnvs: 2}, 2, ServerOptions{AllowImports: true})
	ctx := testCtx(t, 30*time.Second)
	if _, _, err := e.Reset(ctx, envs.ResetRequest{}); err != nil {
		t.Fatal(err)
	}
	slow := envs.Array{DType: envs.Int64, Shape: []int{1}, Ints: []int64{3}} // 0.3 s
	fast := envs.Array{DType: envs.Int64, Shape: []int{1}, Ints: []int64{0}}
	p0, err := e.StepAsync(ctx, 0, 1, slow)
	if err != nil {
		t.Fatal(err)
	}
	p1, err := e.StepAsync(ctx, 1, 2, fast)
	if err != nil {
		t.Fatal(err)
	}
	pending := []*PendingStep{p0, p1}
	for _, want := range []int{1, 0} {
		j, res, err := e.WaitAny(ctx, pending)
		if err != nil {
			t.Fatal(err)
		}
		if j != want {
			t.Fatalf("WaitAny returned sub-batch %d, want %d", j, want)
		}
		if obs := res.Obs.Floats[j]; obs != float64([]int64{3, 0}[j]) {
			t.Fatalf("sub-batch %d observed %v", j, obs)
		}
		pending[j] = nil
	}
}

func TestWaitAnyErrors(t *testing.T) {
	a := startEnv(t, Config{EnvID: "Copy-v0", NumEnvs: 2}, 1, ServerOptions{})
	b := startEnv(t, Config{EnvID: "Copy-v0", NumEnvs: 2}, 1, ServerOptions{})
	ctx := testCtx(t, 30*time.Second)
	for _, e := range []*VecEnv{a, b} {
		if _, _, err := e.Reset(ctx, envs.ResetRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := a.WaitAny(ctx, []*PendingStep{nil, nil}); err == nil || !strings.Contains(err.Error(), "no sub-batch") {
		t.Errorf("WaitAny of nothing: %v", err)
	}
	pb, err := b.StepAsync(ctx, 0, 2, envs.NewBatch(b.ActionSpace(), 2))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.WaitAny(ctx, []*PendingStep{pb}); err == nil || !strings.Contains(err.Error(), "another VecEnv") {
		t.Errorf("WaitAny of another VecEnv's sub-batch: %v", err)
	}
	if _, err := pb.Wait(ctx); err != nil {
		t.Fatal(err)
	}

	hung := startEnv(t, Config{EnvID: slowEnv, NumEnvs: 1, Timeout: 300 * time.Millisecond}, 1, ServerOptions{AllowImports: true})
	if _, _, err := hung.Reset(ctx, envs.ResetRequest{}); err != nil {
		t.Fatal(err)
	}
	// No deadline on the context: Config.Timeout bounds the wait.
	ph, err := hung.StepAsync(context.Background(), 0, 1, envs.NewBatch(hung.ActionSpace(), 1))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, _, err := hung.WaitAny(context.Background(), []*PendingStep{ph}); err == nil || !strings.Contains(err.Error(), "call timeout") {
		t.Errorf("WaitAny on a hung server: %v, want a timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("timeout took %v", d)
	}
}

// TestLateWaitAndCancelledStep: Config.Timeout bounds Wait, not the time the caller takes to call
// it, so results collected after longer than the timeout are good; cancelling StepAsync's context
// fails the sub-batch.
func TestLateWaitAndCancelledStep(t *testing.T) {
	e := startEnv(t, Config{EnvID: "Copy-v0", NumEnvs: 2, Timeout: 200 * time.Millisecond}, 1, ServerOptions{})
	ctx := testCtx(t, 30*time.Second)
	if _, _, err := e.Reset(ctx, envs.ResetRequest{}); err != nil {
		t.Fatal(err)
	}
	acts := envs.NewBatch(e.ActionSpace(), 2)
	ps, err := e.StepAsync(context.Background(), 0, 2, acts)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	if _, err := ps.Wait(context.Background()); err != nil {
		t.Fatalf("Wait after twice the timeout: %v", err)
	}

	sendCtx, cancel := context.WithCancelCause(ctx)
	ps, err = e.StepAsync(sendCtx, 0, 2, acts)
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("caller gave up")
	cancel(stop)
	if _, err := ps.Wait(ctx); !errors.Is(err, stop) {
		t.Fatalf("Wait after StepAsync's context was cancelled: %v, want %v", err, stop)
	}
	// The state is unknown (the server stepped, the caller has no results) until a full reset; the
	// connection is still in step: the next call gets its own reply.
	if _, err := e.Step(ctx, acts); !errors.Is(err, ErrStateUnknown) || !errors.Is(err, stop) {
		t.Fatalf("step after a cancelled one: %v, want ErrStateUnknown wrapping %v", err, stop)
	}
	if _, _, err := e.Reset(ctx, envs.ResetRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Step(ctx, acts); err != nil {
		t.Fatal(err)
	}
}

// TestServerSecondsSplitsTheCall: a step reports the servers' share of its wall time, which holds
// the env time and fits inside the call.
func TestServerSecondsSplitsTheCall(t *testing.T) {
	e := startEnv(t, Config{EnvID: "Copy-v0", NumEnvs: 4}, 2, ServerOptions{})
	ctx := testCtx(t, 30*time.Second)
	start := time.Now()
	if _, _, err := e.Reset(ctx, envs.ResetRequest{}); err != nil {
		t.Fatal(err)
	}
	for _, call := range []string{"reset", "step"} {
		if call == "step" {
			start = time.Now()
			if _, err := e.Step(ctx, envs.NewBatch(e.ActionSpace(), 4)); err != nil {
				t.Fatal(err)
			}
		}
		wall := time.Since(start).Seconds()
		// Two servers work at once, so their summed shares fit in twice the wall time.
		if !(e.EnvSeconds > 0 && e.ServerSeconds > e.EnvSeconds && e.ServerSeconds < 2*wall) {
			t.Errorf("%s: env %.6f s, server %.6f s, wall %.6f s: want 0 < env < server < 2 x wall", call, e.EnvSeconds, e.ServerSeconds, wall)
		}
	}
}
