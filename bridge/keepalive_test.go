package bridge

import (
	"errors"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/envs"
)

// TestKeepaliveOutlivesIdleTimeout: a client idle for longer than the server's idle timeout keeps its
// envs thanks to the background pings, and loses them (UnknownHandle) with the pings turned off.
func TestKeepaliveOutlivesIdleTimeout(t *testing.T) {
	needServer(t)
	// Long enough that a loaded machine does not delay a keepalive (every idle/3) past the
	// timeout: at 1 s this lost its envs once beside two training runs on two cores.
	const idle = 3 * time.Second
	cases := []struct {
		name      string
		keepalive time.Duration
		wantLost  bool
	}{
		{"default keepalive (idle/3)", 0, false},
		{"keepalive off", -1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := startEnv(t, Config{EnvID: "Copy-v0", NumEnvs: 2, Keepalive: tc.keepalive}, 1, ServerOptions{IdleTimeout: idle})
			if e.Hello.IdleTimeout != idle.Seconds() {
				t.Fatalf("hello reports idle timeout %v s, want %v", e.Hello.IdleTimeout, idle.Seconds())
			}
			ctx := testCtx(t, 20*time.Second)
			if _, _, err := e.Reset(ctx, envs.ResetRequest{}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2*idle + idle/2) // the client is alive but sends nothing itself
			_, err := e.Step(ctx, envs.NewBatch(e.ActionSpace(), 2))
			var re *RemoteError
			lost := errors.As(err, &re) && re.Type == "UnknownHandle"
			if lost != tc.wantLost || (err != nil && !lost) {
				t.Fatalf("step after idling: %v (want envs lost: %v)", err, tc.wantLost)
			}
		})
	}
}
