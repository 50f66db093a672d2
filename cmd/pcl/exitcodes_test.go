package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/internal/lab/evaluation"
	"github.com/sparsepcl/sparsepcl/internal/lab/sweep"
)

// The exit codes `pcl help` documents, through runMain: what a script or a shell sees.
func TestExitCodes(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-run")
	cases := []struct {
		name       string
		args       []string
		code       int
		stdout     string // must be contained ("" for no check)
		stderr     string // must be contained ("" for no check)
		stderrLine bool   // stderr is exactly one line
		noStdout   bool
	}{
		{name: "no command", args: nil, code: exitUsage, stderr: "usage: pcl <command>", noStdout: true},
		{name: "help", args: []string{"help"}, code: exitOK, stdout: "130  interrupted by Ctrl-C or SIGTERM"},
		{name: "-h", args: []string{"-h"}, code: exitOK, stdout: "exit codes:"},
		{name: "--help", args: []string{"--help"}, code: exitOK, stdout: "2    bad command line"},
		{name: "unknown command", args: []string{"trian"}, code: exitUsage, stderrLine: true,
			stderr: `pcl: unknown command "trian" (commands: envbench, list, check, play, train, eval, compare, reproduce, report, tables, bench, launch, sweep, diagnose, auth, version; run 'pcl help' for what they do)`},
		{name: "unknown flag", args: []string{"train", "-foo"}, code: exitUsage, stderrLine: true, noStdout: true,
			stderr: "pcl train: flag provided but not defined: -foo (run 'pcl train -h' for the flags)\n"},
		{name: "unknown flag of a subcommand", args: []string{"sweep", "plan", "--foo=1"}, code: exitUsage, stderrLine: true,
			stderr: "flag provided but not defined: -foo (run 'pcl sweep plan -h' for the flags)"},
		{name: "bad flag value", args: []string{"compare", "--iters", "many"}, code: exitUsage, stderrLine: true,
			stderr: `pcl compare: invalid value "many" for flag -iters: parse error (run 'pcl compare -h' for the flags)`},
		{name: "bad boolean", args: []string{"eval", "--per-length=maybe"}, code: exitUsage, stderrLine: true, stderr: "(run 'pcl eval -h' for the flags)"},
		{name: "stray argument", args: []string{"list", "Copy-v0"}, code: exitUsage, stderrLine: true, stderr: `unexpected arguments ["Copy-v0"]`},
		{name: "bench with an mlp flag on an lstm env", args: []string{"bench", "--grid", "3"}, code: exitUsage, stderrLine: true,
			stderr: "pcl bench: --grid shapes long-episode (mlp) runs; Copy-v0 trains the lstm family"},
		{name: "flag the command ignores", args: []string{"bench", "--iters", "5"}, code: exitUsage, stderrLine: true, stderr: "pcl bench: --iters does not apply"},
		{name: "command -h", args: []string{"list", "-h"}, code: exitOK, stderr: "usage: pcl list [flags]", noStdout: true},
		{name: "sweep -h", args: []string{"sweep", "-h"}, code: exitOK, stderr: "usage: pcl sweep plan|run|report"},
		{name: "sweep without subcommand", args: []string{"sweep"}, code: exitUsage, stderrLine: true, stderr: "give a subcommand"},
		{name: "failing run", args: []string{"eval", "--run", missing}, code: exitFailure, stderr: "pcl eval: "},
		{name: "finished", args: []string{"list", "--base", "3"}, code: exitOK, stdout: "Copy-v0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var o, e bytes.Buffer
			code := runMain(context.Background(), tc.args, &o, &e)
			if code != tc.code {
				t.Errorf("pcl %s: exit %d, want %d; stderr %q", strings.Join(tc.args, " "), code, tc.code, e.String())
			}
			if !strings.Contains(o.String(), tc.stdout) {
				t.Errorf("stdout %q lacks %q", o.String(), tc.stdout)
			}
			if tc.noStdout && o.Len() > 0 {
				t.Errorf("stdout %q, want nothing", o.String())
			}
			if !strings.Contains(e.String(), tc.stderr) {
				t.Errorf("stderr %q lacks %q", e.String(), tc.stderr)
			}
			if tc.stderrLine && strings.Count(e.String(), "\n") != 1 {
				t.Errorf("stderr is %d lines, want one:\n%s", strings.Count(e.String(), "\n"), e.String())
			}
		})
	}
}

// A compare stopped by a signal (its context cancelled) in the middle of a run exits 130, and its
// runs are resumable: the same compare with a live context goes on from the saved checkpoint to
// the end, with no iteration lost or repeated. With --jobs 2 the runs are `pcl train`
// subprocesses (this test binary, see TestMain) that get the interrupt.
func TestCompareInterruptedResumes(t *testing.T) {
	t.Setenv(asPCLEnv, "1")
	t.Setenv("SPARSEPCL_BLAS", "gonum")
	for _, jobs := range []string{"1", "2"} {
		t.Run("jobs"+jobs, func(t *testing.T) {
			out := t.TempDir()
			args := func(iters int) []string {
				return []string{"compare", "--out", out, "--bases", "2", "--seeds", "1", "--batch", "4", "--hidden", "8",
					"--eval-every", "0", "--checkpoint-every", "1", "--replay-capacity", "50", "--jobs", jobs, "--iters", strconv.Itoa(iters)}
			}
			c := config.Default()
			c.Env, c.Base, c.Algo, c.Alpha, c.Seed = "Copy-v0", 2, config.AlgoSparse, config.DefaultAlpha(config.AlgoSparse, 2), 1
			sparse := filepath.Join(out, sweep.RunsDir, sweep.ID(c))
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			go func() {
				// The signal, once the first run has saved a checkpoint: far from its end.
				for !runstore.Dir(sparse).HasCheckpoint() && ctx.Err() == nil {
					time.Sleep(5 * time.Millisecond)
				}
				cancel()
			}()
			var o, e bytes.Buffer
			const iters = 30 // more than the iterations before the signal; a budget cannot shrink on resume
			code := runMain(ctx, args(iters), &o, &e)
			if code != exitInterrupted || !strings.Contains(e.String(), "pcl compare: interrupted: the runs saved their checkpoints") {
				t.Fatalf("exit %d, stderr %q; want %d and the interruption", code, e.String(), exitInterrupted)
			}
			meta, err := runstore.Dir(sparse).Meta()
			if err != nil {
				t.Fatalf("no checkpoint after the interruption: %v", err)
			}
			if meta.Iteration < 1 || meta.Iteration >= iters {
				t.Fatalf("checkpoint at iteration %d, want 1..%d", meta.Iteration, iters-1)
			}
			o.Reset()
			e.Reset()
			if code := runMain(context.Background(), args(iters), &o, &e); code != exitOK {
				t.Fatalf("resume: exit %d; stderr %s", code, e.String())
			}
			if want := "resume from iteration " + strconv.Itoa(meta.Iteration); !strings.Contains(o.String(), want) {
				t.Errorf("resume output lacks %q:\n%s", want, o.String())
			}
			c.Algo, c.Alpha = config.AlgoSoft, config.DefaultAlpha(config.AlgoSoft, 2)
			for _, run := range []string{sparse, filepath.Join(out, sweep.RunsDir, sweep.ID(c))} {
				rows, err := runstore.ReadMetrics(filepath.Join(run, runstore.MetricsFile))
				if err != nil {
					t.Fatal(err)
				}
				if len(rows) != iters {
					t.Errorf("%s: %d metrics rows, want %d", run, len(rows), iters)
				}
				for i, r := range rows {
					if r.Iteration != i {
						t.Errorf("%s: row %d is iteration %d", run, i, r.Iteration)
						break
					}
				}
			}
			if _, err := os.Stat(filepath.Join(out, evaluation.ReportFile)); err != nil {
				t.Errorf("the resumed compare wrote no report: %v", err)
			}
		})
	}
}

// Every long command stopped by a signal exits 130 with a message saying what it kept, after
// keeping it: a sweep run its checkpoint, diagnose its probe.csv and panels.
func TestInterruptedCommands(t *testing.T) {
	t.Setenv(asPCLEnv, "1") // sweep run --jobs runs `pcl sweep run` subprocesses of this binary
	t.Setenv("SPARSEPCL_BLAS", "gonum")
	for _, k := range sweep.IndexEnv() {
		t.Setenv(k, "")
	}
	tiny := []string{"--base", "2", "--batch", "4", "--hidden", "8"}
	sweepDir := func(t *testing.T) string {
		dir := t.TempDir()
		if out, err := runPCL(t, append([]string{"sweep", "plan", "--out", dir, "--iters", "1000000", "--checkpoint-every", "1"}, tinySweep...)...); err != nil {
			t.Fatalf("plan: %s", out)
		}
		return dir
	}
	runDir := func(t *testing.T, dir string) string {
		m, err := sweep.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		return sweep.RunDir(dir, m.Runs[0])
	}
	partial := func(t *testing.T, dir string) {
		m, err := sweep.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if st, err := sweep.Inspect(dir, m.Runs[0]); err != nil || st.State != sweep.Partial || st.Iteration < 1 {
			t.Errorf("run 0 after the interruption: %+v, %v; want a partial run to resume", st, err)
		}
	}
	cases := []struct {
		name  string
		setup func(t *testing.T) (args []string, ready func() bool, after func())
		msg   string
	}{
		{"bench", func(t *testing.T) ([]string, func() bool, func()) {
			args := append([]string{"bench", "--measure", "1000000"}, tiny...)
			return args, func() bool { return true }, func() {}
		}, "pcl bench: interrupted: bench stopped before its measurement was complete"},
		{"diagnose", func(t *testing.T) ([]string, func() bool, func()) {
			out := t.TempDir()
			args := append([]string{"diagnose", "--iters", "1000000", "--every", "1", "--out", out}, tiny...)
			probe := filepath.Join(out, "probe.csv")
			ready := func() bool { b, _ := os.ReadFile(probe); return bytes.Count(b, []byte("\n")) >= 3 }
			after := func() {
				if _, err := os.Stat(filepath.Join(out, "writing.png")); err != nil {
					t.Errorf("no panels after the interruption: %v", err)
				}
			}
			return args, ready, after
		}, "probe.csv and its panels hold the iterations inspected up to"},
		{"sweep run --index", func(t *testing.T) ([]string, func() bool, func()) {
			dir := sweepDir(t)
			rd := runDir(t, dir)
			return []string{"sweep", "run", "--dir", dir, "--index", "0"}, func() bool { return runstore.Dir(rd).HasCheckpoint() }, func() { partial(t, dir) }
		}, "pcl sweep: interrupted: run 0 ("},
		{"sweep run --jobs", func(t *testing.T) ([]string, func() bool, func()) {
			dir := sweepDir(t)
			rd := runDir(t, dir)
			return []string{"sweep", "run", "--dir", dir, "--jobs", "1"}, func() bool { return runstore.Dir(rd).HasCheckpoint() }, func() { partial(t, dir) }
		}, "pcl sweep: interrupted: the runs under way saved their checkpoints"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args, ready, after := tc.setup(t)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			go func() {
				for !ready() && ctx.Err() == nil {
					time.Sleep(5 * time.Millisecond)
				}
				cancel()
			}()
			var o, e bytes.Buffer
			if code := runMain(ctx, args, &o, &e); code != exitInterrupted || !strings.Contains(e.String(), tc.msg) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, e.String(), exitInterrupted, tc.msg)
			}
			after()
		})
	}
}
