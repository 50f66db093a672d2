package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"testing"
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
