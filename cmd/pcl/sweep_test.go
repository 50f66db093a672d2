package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/internal/lab/evaluation"
	"github.com/sparsepcl/sparsepcl/internal/lab/sweep"
)

var tinySweep = []string{"--envs", "Copy-v0", "--bases", "2", "--algos", "sparse,soft", "--sparse-alphas", "0.05", "--soft-alphas", "0.02",
	"--batch", "8", "--hidden", "8", "--eval-every", "0", "--checkpoint-every", "1", "--replay-capacity", "50"}

func runPCL(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runMain(context.Background(), args, &out, &errb)
	if code != 0 {
		return out.String() + errb.String(), &exec.ExitError{}
	}
	return out.String() + errb.String(), nil
}

// TestSweepKillResume plans a tiny sweep, kills `pcl sweep run --index 0` with SIGKILL after its
// first checkpoint, runs it again to the end, runs the rest with the local runner, and reports.
func TestSweepKillResume(t *testing.T) {
	dir := t.TempDir()
	if out, err := runPCL(t, append([]string{"sweep", "plan", "--out", dir, "--iters", "12"}, tinySweep...)...); err != nil {
		t.Fatalf("plan: %s", out)
	}
	m, err := sweep.Load(dir)
	if err != nil || len(m.Runs) != 2 {
		t.Fatalf("manifest: %v, %d runs", err, len(m.Runs))
	}
	rd := sweep.RunDir(dir, m.Runs[0])
	cmd := exec.Command(os.Args[0], "sweep", "run", "--dir", dir)
	cmd.Env = append(os.Environ(), asPCLEnv+"=1", "SLURM_ARRAY_TASK_ID=0", "GOMAXPROCS=1", "OPENBLAS_NUM_THREADS=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for !runstore.Dir(rd).HasCheckpoint() {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("no checkpoint within 2 minutes")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	st, err := sweep.Inspect(dir, m.Runs[0])
	if err != nil {
		t.Fatal(err)
	}
	if st.State != sweep.Partial {
		t.Skipf("the run reached %v (iteration %d) before the kill; nothing to resume", st.State, st.Iteration)
	}
	out, err := runPCL(t, "sweep", "run", "--dir", dir, "--index", "0")
	if err != nil || !strings.Contains(out, "done (found partial)") {
		t.Fatalf("resume after the kill: %s", out)
	}
	rows, err := runstore.ReadMetrics(filepath.Join(rd, runstore.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if r.Iteration != i {
			t.Fatalf("metrics after kill and resume: row %d is iteration %d", i, r.Iteration)
		}
	}
	if len(rows) != 12 {
		t.Errorf("%d metrics rows, want 12", len(rows))
	}
	// The local runner starts `pcl sweep run` subprocesses of this binary: they must act as pcl,
	// not run the tests again.
	t.Setenv(asPCLEnv, "1")
	if out, err := runPCL(t, "sweep", "run", "--dir", dir, "--jobs", "2"); err != nil || !strings.Contains(out, "1 of 2 runs to do") {
		t.Errorf("local runner: %s", out)
	}
	if out, err := runPCL(t, "sweep", "report", "--dir", dir); err != nil || !strings.Contains(out, "report of 2 finished runs out of 2") {
		t.Errorf("report: %s", out)
	}
}

func TestSweepUsageErrors(t *testing.T) {
	for _, k := range sweep.IndexEnv() { // as if not under a scheduler
		t.Setenv(k, "")
	}
	dir := t.TempDir()
	if out, err := runPCL(t, append([]string{"sweep", "plan", "--out", dir, "--iters", "2"}, tinySweep...)...); err != nil {
		t.Fatalf("plan: %s", out)
	}
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"sweep"}, "give a subcommand"},
		{[]string{"sweep", "plot"}, "unknown subcommand"},
		{[]string{"sweep", "plan", "--out", dir, "--envs", "Copy-v0", "--bases", "2", "--alpha", "0.1"}, "--alpha does not apply"},
		{[]string{"sweep", "plan", "--envs", "Copy-v0", "--bases", "2"}, "--out is required"},
		{append([]string{"sweep", "plan", "--out", dir, "--iters", "1"}, tinySweep...), "already plans another sweep"}, // budgets only grow
		{[]string{"sweep", "run", "--dir", dir, "--index", "2"}, "run index 2 (from --index) is out of range: the manifest has 2 runs"},
		{[]string{"sweep", "run", "--dir", dir}, "no run index"},
		{[]string{"sweep", "run", "--dir", dir, "--index", "0", "--jobs", "2"}, "not both"},
		{[]string{"sweep", "run", "--dir", t.TempDir(), "--index", "0"}, "plan the sweep first"},
		{[]string{"sweep", "report", "--dir", t.TempDir()}, "plan the sweep first"},
		{[]string{"sweep", "choose", "none=" + dir}, "--out is required"},
		{[]string{"sweep", "choose", "--out", t.TempDir()}, "give the credit sweeps as set=dir"},
		{[]string{"sweep", "choose", "--out", t.TempDir(), "all=" + dir}, "not set=dir with a lever set"},
		{[]string{"sweep", "choose", "--out", t.TempDir(), "none=" + dir, "none=" + dir}, "lever set none given twice"},
		{[]string{"sweep", "choose", "--out", t.TempDir(), "none=" + t.TempDir()}, "plan the sweep first"},
		{[]string{"sweep", "evaluate", dir}, "give --out and at least one sweep directory"},
		{[]string{"sweep", "evaluate", "--out", t.TempDir()}, "give --out and at least one sweep directory"},
		{[]string{"sweep", "evaluate", "--out", t.TempDir(), t.TempDir()}, "plan the sweep first"},
	}
	for _, c := range cases {
		out, err := runPCL(t, c.args...)
		if err == nil || !strings.Contains(out, c.msg) {
			t.Errorf("pcl %s: %q, want a failure containing %q", strings.Join(c.args, " "), out, c.msg)
		}
	}
}

// TestSweepChoose runs two tiny credit sweeps (lever sets none and both, alike), chooses from them,
// and plans the evaluation sweep it prints: neither set passes, so both algorithms take no levers
// (fewer levers breaks the tie), at 2,000 iterations (nothing rises without greedy evaluations).
func TestSweepChoose(t *testing.T) {
	none, both, out := t.TempDir(), t.TempDir(), t.TempDir()
	for _, dir := range []string{none, both} {
		if o, err := runPCL(t, append([]string{"sweep", "plan", "--out", dir, "--iters", "3"}, tinySweep...)...); err != nil {
			t.Fatalf("plan: %s", o)
		}
	}
	if o, err := runPCL(t, "sweep", "choose", "--out", out, "none="+none, "both="+both); err != nil || !strings.Contains(o, "0 configurations chosen, 2 not yet") {
		t.Errorf("choose before the runs: %s", o)
	}
	for _, dir := range []string{none, both} {
		for i := range 2 {
			if o, err := runPCL(t, "sweep", "run", "--dir", dir, "--index", strconv.Itoa(i)); err != nil {
				t.Fatalf("run %d: %s", i, o)
			}
		}
	}
	o, err := runPCL(t, "sweep", "choose", "--out", out, "none="+none, "both="+both)
	if err != nil || !strings.Contains(o, "2 configurations chosen, 0 not yet") {
		t.Fatalf("choose: %s", o)
	}
	_, flags, ok := strings.Cut(o, "sweep: eval-none-2000, levers none: ")
	flags, _, _ = strings.Cut(flags, "\n")
	if !ok || flags != "--envs Copy-v0 --actions Copy-v0:8 --algos sparse,soft --sparse-alphas Copy-v0:0.05 --soft-alphas Copy-v0:0.02 --iters 2000" {
		t.Fatalf("choose printed %q, want the none set's sweep at 2000 iterations", o)
	}
	rep, err := os.ReadFile(filepath.Join(out, evaluation.ReportFile))
	if err != nil || !strings.Contains(string(rep), "| eval-none-2000 | none | 2000 | `"+flags+"` |") {
		t.Errorf("report (%v):\n%s", err, rep)
	}
	eval := t.TempDir()
	if o, err := runPCL(t, append([]string{"sweep", "plan", "--out", eval, "--seed", "1", "--seeds", "5"}, strings.Fields(flags)...)...); err != nil || !strings.Contains(o, "10 runs planned") {
		t.Errorf("planning the printed flags: %s", o)
	}
	// The evaluation report pairs the algorithms of one sweep, and refuses two configurations of
	// one algorithm at a size (both sweeps hold the same cells).
	evalOut := t.TempDir()
	if o, err := runPCL(t, "sweep", "evaluate", "--out", evalOut, none); err != nil || !strings.Contains(o, "1 task sizes compared") {
		t.Errorf("evaluate: %s", o)
	}
	if rep, err := os.ReadFile(filepath.Join(evalOut, evaluation.EvaluationFile)); err != nil || !strings.Contains(string(rep), "| Copy | 8 | 0/1 | 0/1 | no |") {
		t.Errorf("evaluation (%v):\n%s", err, rep)
	}
	if o, err := runPCL(t, "sweep", "evaluate", "--out", t.TempDir(), none, both); err == nil || !strings.Contains(o, "two sparse PCL configurations at Copy |A| = 8") {
		t.Errorf("evaluate over two sweeps of the same cells: %s, want a refusal", o)
	}
}
