package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// pcl reproduce refuses a run whose binary carried no VCS stamp (the test binary's), and with
// --here re-runs it by this binary identically; with one metrics cell changed it names the
// iteration and column where the runs part; with another OpenBLAS core forced on a run that
// OpenBLAS made, it reports where that run parts from the recorded one.
func TestReproduce(t *testing.T) {
	t.Setenv(asPCLEnv, "1") // the re-run is a child of this test binary acting as pcl
	run := func(args ...string) (int, string) {
		var o, e bytes.Buffer
		code := runMain(context.Background(), args, &o, &e)
		return code, o.String() + e.String()
	}
	t.Run("pure Go, then a changed cell", func(t *testing.T) {
		t.Setenv("SPARSEPCL_BLAS", "gonum")
		dir := filepath.Join(t.TempDir(), "run")
		if code, out := run(trainArgs(dir, "--iters", "6")...); code != exitOK {
			t.Fatalf("train: %s", out)
		}
		// The test binary carries no VCS stamp: no commit can rebuild the run's binary.
		if code, out := run("reproduce", "--run", dir); code != exitFailure || !strings.Contains(out, "no binary_commit") {
			t.Fatalf("an unstamped run: exit %d, want %d naming the missing binary_commit:\n%s", code, exitFailure, out)
		}
		if code, out := run("reproduce", "--run", dir, "--here"); code != exitOK || !strings.Contains(out, "identical for 6 iterations") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		path := filepath.Join(dir, "metrics.csv")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		cells := strings.Split(lines[4], ",") // iteration 3
		cells[5] = "12345"                    // its loss
		lines[4] = strings.Join(cells, ",")
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, out := run("reproduce", "--run", dir, "--here"); code != exitFailure || !strings.Contains(out, "part at iteration 3, column loss: recorded 12345") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})
	t.Run("another OpenBLAS core", func(t *testing.T) {
		if runtime.GOARCH != "amd64" {
			t.Skip("Prescott is an x86-64 core type")
		}
		if _, err := tensor.OpenBLASEngine(); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal(err)
			}
			t.Skip(err)
		}
		t.Setenv("SPARSEPCL_BLAS", "openblas")
		t.Setenv("OPENBLAS_NUM_THREADS", "1")
		dir := filepath.Join(t.TempDir(), "run")
		if code, out := run(trainArgs(dir, "--iters", "3", "--hidden", "64", "--batch", "64")...); code != exitOK {
			t.Fatalf("train: %s", out)
		}
		// Prescott (SSE3) kernels run on every x86-64 CPU and sum in another order than the AVX2
		// and AVX-512 ones; where OpenBLAS does not know the CPU it runs Prescott's itself (an
		// Intel Xeon of model 207 here), and Nehalem's (SSE4.2) are the other core.
		info, err := os.ReadFile(filepath.Join(dir, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		other := "Prescott"
		if strings.Contains(string(info), "core Prescott)") {
			other = "Nehalem"
		}
		code, out := run("reproduce", "--run", dir, "--here", "--blas-core", other)
		if code != exitFailure || !strings.Contains(out, "OPENBLAS_CORETYPE="+other) || !strings.Contains(out, "the runs part at iteration") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})
}
