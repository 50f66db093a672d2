package bridge

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/bridge/internal/transport"
)

var (
	probeOnce sync.Once
	probeErr  error
)

// needServer skips (or, with CI=true, fails) the test when no Python server can be started here.
func needServer(t *testing.T) {
	t.Helper()
	probeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		s, err := StartServer(ctx, ServerOptions{})
		if err != nil {
			probeErr = err
			return
		}
		c, err := transport.Dial(ctx, s.Endpoint, 1<<20, nil, nil)
		if err == nil {
			_, err = hello(ctx, c)
			c.Close()
		}
		s.Close()
		probeErr = err
	})
	if probeErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python server unavailable (set SPARSEPCL_PYTHON): %v", probeErr)
		}
		t.Skipf("python server unavailable (set SPARSEPCL_PYTHON): %v", probeErr)
	}
}

func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// startEnv starts servers for cfg and closes them at the end of the test.
func startEnv(t *testing.T, cfg Config, servers int, opts ServerOptions) *VecEnv {
	t.Helper()
	needServer(t)
	e, err := Start(testCtx(t, 60*time.Second), cfg, servers, opts)
	if err != nil {
		t.Fatalf("Start(%s): %v", cfg.EnvID, err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// pythonCmd runs `python -m module args...` in the repository root.
func pythonCmd(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	root, err := FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(FindPython(root), args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PYTHONPATH="+root)
	return cmd
}

// waitGoroutines waits until the goroutine count drops to at most base, failing after 5 s.
func waitGoroutines(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			n := runtime.Stack(buf, true)
			t.Fatalf("%d goroutines left, want <= %d:\n%s", runtime.NumGoroutine(), base, buf[:n])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
