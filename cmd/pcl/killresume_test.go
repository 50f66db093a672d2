package main

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/runstore"
)

// A run killed with SIGKILL at a random point of an iteration, then resumed, ends with the metrics
// and the final parameters of an uninterrupted run of the same command, every column but the wall
// time, for both families: Copy with the LSTM, and HalfCheetah with the MLP through the real Python
// server. Every run is a subprocess of this binary acting as pcl, with one thread, as the
// experiments run. The kill point is drawn afresh each time and logged.
func TestKillNineResumesExactly(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: trains six runs")
	}
	cases := []struct {
		name         string
		remote       bool
		iters, every int
		args         []string
	}{
		{"copy-lstm", false, 40, 4, []string{"--env", "Copy-v0", "--base", "3", "--batch", "16", "--hidden", "16", "--eval-every", "5", "--eval-episodes", "4"}},
		// Checkpoints every 10 iterations of 100 steps: at the end of each 1,000-step episode,
		// where a long-episode run resumes exactly.
		{"halfcheetah-mlp", true, 150, 10, []string{"--env", "HalfCheetah-v5", "--grid", "3", "--norm-obs", "--eval-every", "50"}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), testBudget(t, 10*time.Minute))
	defer cancel()
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	t.Logf("kill points drawn with seed %d", seed)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.remote {
				needServer(t)
			}
			args := append([]string{"--iters", strconv.Itoa(tc.iters), "--checkpoint-every", strconv.Itoa(tc.every), "--seed", "7", "--progress-every", "0"}, tc.args...)
			ref := filepath.Join(t.TempDir(), "ref")
			if out, err := pclProcess(ctx, append([]string{"train", "--out", ref}, args...)...).CombinedOutput(); err != nil {
				t.Fatalf("uninterrupted run: %v\n%s", err, out)
			}
			killed := filepath.Join(t.TempDir(), "killed")
			// Past the first checkpoint and short of the end: somewhere in iterations
			// [every+1, iters-3), then 0-30 ms into the next one.
			at := tc.every + 1 + rng.IntN(tc.iters-tc.every-4)
			delay := time.Duration(rng.IntN(30)) * time.Millisecond
			if n := killAt(ctx, t, append([]string{"train", "--out", killed}, args...), killed, at, delay); n >= tc.iters {
				t.Fatalf("the run finished (%d rows) before the kill", n)
			}
			if out, err := pclProcess(ctx, "train", "--out", killed, "--resume", "--iters", strconv.Itoa(tc.iters)).CombinedOutput(); err != nil {
				t.Fatalf("resume: %v\n%s", err, out)
			}
			want, err := goldenRecord(ref, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := goldenRecord(killed, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := firstDiff(want, got); diff != "" {
				t.Errorf("killed at iteration %d + %v and resumed, the run differs from the uninterrupted one: %s", at, delay, diff)
			}
		})
	}
}

// pclProcess is this test binary acting as pcl with args, on one thread.
func pclProcess(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), asPCLEnv+"=1", "GOMAXPROCS=1", "OPENBLAS_NUM_THREADS=1")
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// killAt starts pcl with args, waits until its run dir's metrics.csv holds at rows, sleeps delay
// and kills it with SIGKILL. It returns the rows written by then.
func killAt(ctx context.Context, t *testing.T, args []string, dir string, at int, delay time.Duration) int {
	t.Helper()
	cmd := pclProcess(ctx, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rows := func() int {
		r, err := runstore.Dir(dir).Metrics()
		if err != nil {
			return 0
		}
		return len(r)
	}
	for rows() < at {
		if ctx.Err() != nil || cmd.ProcessState != nil {
			_ = cmd.Process.Kill()
			t.Fatalf("the run never reached iteration %d", at)
		}
		time.Sleep(2 * time.Millisecond)
	}
	time.Sleep(delay)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	n := rows()
	t.Logf("killed at iteration %d + %v (%d rows written)", at, delay, n)
	return n
}
