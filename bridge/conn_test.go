package bridge

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/envs"
)

const actionDelayEnv = "python_server.testing_envs:ActionDelayEnv"

// TestGivingUpKeepsTheStream: a call that gives up (deadline or cancellation) while it is the one
// reading the connection leaves the stream in step: the late replies are dropped and the next call
// gets its own reply. The VecEnv's state is unknown after each, until a Reset of every copy.
func TestGivingUpKeepsTheStream(t *testing.T) {
	e := startEnv(t, Config{EnvID: actionDelayEnv, Kwargs: map[string]any{"unit": 0.2}, NumEnvs: 1}, 1, ServerOptions{AllowImports: true})
	ctx := testCtx(t, 30*time.Second)
	if _, _, err := e.Reset(ctx, envs.ResetRequest{}); err != nil {
		t.Fatal(err)
	}
	act := func(a int64) envs.Array { return envs.Array{DType: envs.Int64, Shape: []int{1}, Ints: []int64{a}} }

	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := e.Step(short, act(3)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("step past its deadline: %v, want DeadlineExceeded", err)
	}
	if _, err := e.Step(ctx, act(1)); !errors.Is(err, ErrStateUnknown) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("step after a timed-out one: %v, want ErrStateUnknown wrapping DeadlineExceeded", err)
	}
	if _, _, err := e.Reset(ctx, envs.ResetRequest{}); err != nil {
		t.Fatalf("reset after a timed-out step: %v", err)
	}
	cancelled, cancelNow := context.WithCancel(ctx)
	time.AfterFunc(100*time.Millisecond, cancelNow)
	if _, err := e.Step(cancelled, act(2)); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled step: %v, want Canceled", err)
	}
	if _, _, err := e.Reset(ctx, envs.ResetRequest{Mask: []bool{true}}); !errors.Is(err, ErrStateUnknown) {
		t.Fatalf("masked reset after a cancelled step: %v, want ErrStateUnknown", err)
	}
	if _, _, err := e.Reset(ctx, envs.ResetRequest{}); err != nil {
		t.Fatalf("reset after a cancelled step: %v", err)
	}
	res, err := e.Step(ctx, act(1))
	if err != nil {
		t.Fatalf("step after two abandoned ones: %v", err)
	}
	if got := res.Obs.Floats[0]; got != 1 {
		t.Fatalf("observed %v, want 1 (a late reply was taken for this one)", got)
	}
}

// TestReplyCap: a reply larger than Config.MaxReplyBytes is an error for its call only; the
// connection keeps serving.
func TestReplyCap(t *testing.T) {
	// 250 int64 observations fit in 2048 bytes (else the spaces would be refused at make), but not
	// with the rest of the reply.
	e := startEnv(t, Config{EnvID: "Copy-v0", NumEnvs: 250, MaxReplyBytes: 2048}, 1, ServerOptions{})
	ctx := testCtx(t, 30*time.Second)
	_, _, err := e.Reset(ctx, envs.ResetRequest{})
	if err == nil || !strings.Contains(err.Error(), "exceeds the cap of 2048") {
		t.Fatalf("reset with a large reply: %v, want a cap error", err)
	}
	if err := e.Ping(ctx); err != nil {
		t.Fatalf("ping after a capped reply: %v", err)
	}
}

// TestCallsShareAConnection: calls from several goroutines on one connection each get their own
// reply, whoever reads the stream (run with -race).
func TestCallsShareAConnection(t *testing.T) {
	e := startEnv(t, Config{EnvID: "Copy-v0", NumEnvs: 4}, 1, ServerOptions{})
	ctx := testCtx(t, 60*time.Second)
	if _, _, err := e.Reset(ctx, envs.ResetRequest{}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if err := e.Ping(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for range 100 { // steps interleaved with the pings
		if _, err := e.Step(ctx, envs.NewBatch(e.ActionSpace(), 4)); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
