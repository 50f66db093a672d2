package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"testing"

	"github.com/sparsepcl/sparsepcl/bridge"
)

// asPCLEnv makes the test binary act as the pcl command: `pcl compare --jobs N` runs `pcl train`
// subprocesses of its own executable, which in a test is this binary (and `pcl sweep run --jobs N`
// runs `pcl sweep run --index` ones).
const asPCLEnv = "SPARSEPCL_TEST_AS_PCL"

func TestMain(m *testing.M) {
	if os.Getenv(asPCLEnv) == "1" && len(os.Args) > 1 && (os.Args[1] == "train" || os.Args[1] == "sweep" || os.Args[1] == "reproduce") {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, nil)))
		code := runMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// needServer skips t, or fails it under CI=true, when the Python env server cannot start (a
// local one from .venv), trying once per test binary.
func needServer(t *testing.T) {
	t.Helper()
	if err := serverProbe(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python server unavailable: %v", err)
		}
		t.Skipf("python server unavailable (run bash scripts/setup): %v", err)
	}
}

// serverProbe starts and stops one server, once.
var serverProbe = sync.OnceValue(func() error {
	s, err := bridge.StartServer(context.Background(), bridge.ServerOptions{})
	if err != nil {
		return err
	}
	return s.Close()
})
