package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/internal/lab/runplot"
	"github.com/sparsepcl/sparsepcl/internal/lab/sweep"
)

func TestTrainEvalBadInput(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt")
	if err := os.MkdirAll(corrupt, 0o755); err != nil {
		t.Fatal(err)
	}
	good := []string{"--env", "Copy-v0", "--base", "2", "--batch", "8", "--hidden", "8", "--iters", "2", "--eval-episodes", "4"}
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"unknown flag", []string{"train", "--bogus"}, 2, "bogus"},
		{"unknown env", []string{"train", "--env", "Nope-v0", "--out", filepath.Join(dir, "x")}, 2, "Nope-v0"},
		{"bad algo", []string{"train", "--algo", "greedy", "--out", filepath.Join(dir, "y")}, 2, "algo"},
		{"resume without out", []string{"train", "--resume"}, 2, "--out"},
		{"resume without checkpoint", []string{"train", "--resume", "--out", corrupt}, 1, "no checkpoint"},
		{"eval without run", []string{"eval"}, 2, "--run"},
		{"eval missing run", []string{"eval", "--run", filepath.Join(dir, "missing")}, 1, "config"},
		{"compare bad bases", []string{"compare", "--bases", "5,x"}, 2, "bases"},
		{"train ok", append([]string{"train", "--out", filepath.Join(dir, "run")}, good...), 0, ""},
		{"train again refuses", append([]string{"train", "--out", filepath.Join(dir, "run")}, good...), 1, "--resume"},
		{"resume with config flags", []string{"train", "--out", filepath.Join(dir, "run"), "--resume", "--lr", "0.1", "--batch", "3"}, 2, "--batch-size, --learning-rate"},
		{"resume of a finished run", []string{"train", "--out", filepath.Join(dir, "run"), "--resume"}, 2, "has already done 2 iterations"},
		{"resume extends", []string{"train", "--out", filepath.Join(dir, "run"), "--resume", "--iters", "3"}, 0, ""},
		{"eval ok", []string{"eval", "--run", filepath.Join(dir, "run"), "--episodes", "4"}, 0, ""},
	}
	for _, tc := range cases {
		var out, errb bytes.Buffer
		code := runMain(context.Background(), tc.args, &out, &errb)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d; stderr: %s", tc.name, code, tc.code, errb.String())
			continue
		}
		if tc.msg != "" && !strings.Contains(errb.String(), tc.msg) {
			t.Errorf("%s: stderr %q does not mention %q", tc.name, errb.String(), tc.msg)
		}
		if tc.name == "resume extends" && (!strings.Contains(out.String(), ": 3 iterations") || strings.Contains(out.String(), "NaN")) {
			t.Errorf("resume with --iters 3: output %q, want 3 iterations", out.String())
		}
		if tc.name == "eval ok" {
			for _, want := range []string{"after 3 iterations", "greedy reward at the trained level (min_length 2: inputs of 2-4 symbols)", "verdict: not solved", "| 2 (trained) | ", "| 30 | "} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("eval output %q lacks %q", out.String(), want)
				}
			}
		}
	}
	// A corrupt checkpoint is a clear error, not a panic.
	run := filepath.Join(dir, "run")
	if err := os.WriteFile(filepath.Join(run, "checkpoint.bin"), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := runMain(context.Background(), []string{"eval", "--run", run}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "checkpoint") {
		t.Errorf("corrupt checkpoint: exit %d, stderr %q", code, errb.String())
	}
}

// compare reuses complete runs, resumes incomplete ones and grows budgets, refuses a smaller budget
// or another config, and never deletes anything in --out.
func TestCompareResumesAndNeverDeletes(t *testing.T) {
	out := t.TempDir()
	args := func(extra ...string) []string {
		return append([]string{"compare", "--out", out, "--bases", "2", "--seeds", "1", "--batch", "4", "--hidden", "8",
			"--eval-episodes", "4", "--eval-every", "1"}, extra...)
	}
	c := config.Default()
	c.Env, c.Base, c.Algo, c.Alpha, c.Seed = "Copy-v0", 2, config.AlgoSparse, config.DefaultAlpha(config.AlgoSparse, 2), 1
	run := filepath.Join(out, sweep.RunsDir, sweep.ID(c))
	notes := filepath.Join(run, "notes.txt")
	steps := []struct {
		name   string
		args   []string
		code   int
		stdout []string // substrings of stdout
		stderr string
		rows   int // metrics rows of the sparse run afterwards
	}{
		{"first", args("--iters", "2"), 0, []string{"| Copy | 8 | sparse |", "| Copy | 8 | soft |"}, "", 2},
		{"again: reused", args("--iters", "2"), 0, []string{"is finished: left alone"}, "", 2},
		{"more iterations: resumed", args("--iters", "3"), 0, []string{"resume from iteration 2"}, "", 3},
		{"fewer iterations: refused", args("--iters", "2"), 1, nil, "iters: 3 -> 2", 3},
		{"another config: refused", args("--iters", "3", "--lr", "0.02"), 1, nil, "learning_rate: 0.005 -> 0.02", 3},
	}
	for i, st := range steps {
		var o, e bytes.Buffer
		code := runMain(context.Background(), st.args, &o, &e)
		if code != st.code {
			t.Fatalf("%s: exit %d, want %d; stderr %s", st.name, code, st.code, e.String())
		}
		for _, want := range st.stdout {
			if !strings.Contains(o.String(), want) {
				t.Errorf("%s: stdout lacks %q:\n%s", st.name, want, o.String())
			}
		}
		if st.stderr != "" && !strings.Contains(e.String(), st.stderr) {
			t.Errorf("%s: stderr %q lacks %q", st.name, e.String(), st.stderr)
		}
		rows, err := runstore.ReadMetrics(filepath.Join(run, runstore.MetricsFile))
		if err != nil || len(rows) != st.rows {
			t.Errorf("%s: sparse run has %d metrics rows (%v), want %d", st.name, len(rows), err, st.rows)
		}
		if i == 0 {
			if err := os.WriteFile(notes, []byte("mine"), 0o644); err != nil {
				t.Fatal(err)
			}
		} else if b, err := os.ReadFile(notes); err != nil || string(b) != "mine" {
			t.Errorf("%s: the user's file in the run dir was lost: %v", st.name, err)
		}
	}
}

// tinyTrain are the flags of a Copy run that takes a second.
var tinyTrain = []string{"--env", "Copy-v0", "--base", "2", "--batch", "8", "--hidden", "8", "--eval-episodes", "4", "--eval-every", "1"}

func trainArgs(out string, extra ...string) []string {
	return append(append([]string{"train", "--out", out}, tinyTrain...), extra...)
}

// A configuration estimated not to fit is refused as a usage error before anything is allocated
// or written, with the estimate, what dominates and the limit; --max-memory moves the limit.
func TestTrainRefusesTooMuchMemory(t *testing.T) {
	dir := t.TempDir()
	tiny := append([]string{"--iters", "1"}, tinyTrain...)
	cases := []struct {
		name  string
		flags []string
		code  int
		msgs  []string
	}{
		{"paper's Copy at base 100000", []string{"--env", "Copy-v0", "--base", "100000"}, 2,
			[]string{"Copy-v0 at --base 100000 (400000 actions) needs about ", "mostly the training batch's per-action arrays (400 episodes × 201 steps × 400000 actions",
				"above the limit of ", "80% of this machine's ", "lower --batch-size, --max-steps or --base", "--max-memory"}},
		{"a small limit", append([]string{"--max-memory", "1MiB"}, tiny...), 2, []string{"above the limit of 1.0 MiB (--max-memory 1MiB)"}},
		{"a bad limit", append([]string{"--max-memory", "lots"}, tiny...), 2, []string{`--max-memory: memory size "lots"`}},
		{"no limit", append([]string{"--max-memory", "off"}, tiny...), 0, nil},
		{"a large enough limit", append([]string{"--max-memory", "64GiB"}, tiny...), 0, nil},
	}
	for i, tc := range cases {
		out := filepath.Join(dir, fmt.Sprint("run", i))
		args := append([]string{"train", "--out", out}, tc.flags...)
		var o, e bytes.Buffer
		code := runMain(context.Background(), args, &o, &e)
		if code != tc.code {
			t.Fatalf("%s: exit %d, want %d; stderr %s", tc.name, code, tc.code, e.String())
		}
		for _, m := range tc.msgs {
			if !strings.Contains(e.String(), m) {
				t.Errorf("%s: stderr %q lacks %q", tc.name, e.String(), m)
			}
		}
		if _, err := os.Stat(out); (err == nil) != (tc.code == 0) {
			t.Errorf("%s: run directory exists: %v, want %v", tc.name, err == nil, tc.code == 0)
		}
	}
}

// fileState is a file's bytes and modification time.
type fileState struct {
	data  string
	mtime time.Time
}

func dirState(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]fileState{}
	for _, e := range es {
		p := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = fileState{string(b), st.ModTime()}
	}
	return m
}

// With --resume, --iters is the total: a total at or below the iterations done is a usage error
// that says how many are done and changes nothing (config.json keeps its bytes and its mtime);
// without --iters the saved total counts; a larger total continues the run.
func TestTrainResumeTotal(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	var o, e bytes.Buffer
	if code := runMain(context.Background(), trainArgs(run, "--iters", "3"), &o, &e); code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	cases := []struct {
		name  string
		iters []string
		code  int
		msg   string
		out   string
	}{
		{"the same total", []string{"--iters", "3"}, 2, "--iters 3 is not above the 3 iterations " + run + " has already done: with --resume, --iters is the total number of iterations, so pass --iters 4 or more", ""},
		{"a smaller total", []string{"--iters", "1"}, 2, "--iters 1 is not above the 3 iterations", ""},
		{"the saved total", nil, 2, run + " has already done 3 iterations, its total: pass --iters N with N above 3", ""},
		{"a larger total", []string{"--iters", "5"}, 0, "", "run " + run + ": 5 iterations"},
	}
	for _, tc := range cases {
		before := dirState(t, run)
		var o, e bytes.Buffer
		code := runMain(context.Background(), append([]string{"train", "--out", run, "--resume"}, tc.iters...), &o, &e)
		if code != tc.code || !strings.Contains(e.String(), tc.msg) || !strings.Contains(o.String(), tc.out) {
			t.Fatalf("%s: exit %d (want %d), stdout %q (want %q), stderr %q (want %q)", tc.name, code, tc.code, o.String(), tc.out, e.String(), tc.msg)
		}
		if code != 0 {
			after := dirState(t, run)
			if len(after) != len(before) {
				t.Errorf("%s: %d files before, %d after", tc.name, len(before), len(after))
			}
			for name, b := range before {
				if a := after[name]; a.data != b.data || !a.mtime.Equal(b.mtime) {
					t.Errorf("%s: %s changed (bytes or mtime)", tc.name, name)
				}
			}
		}
	}
}

// pcl train draws the run's figures into its directory: the library draws nothing, pcl passes
// runplot.Run as train.Options.Plot.
func TestTrainWritesPlots(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	var o, e bytes.Buffer
	if code := runMain(context.Background(), trainArgs(run, "--iters", "2"), &o, &e); code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	for _, f := range []string{runplot.RewardPlot, runplot.MaxProbPlot, runplot.SparsityPlot} {
		if st, err := os.Stat(filepath.Join(run, f)); err != nil || st.Size() == 0 {
			t.Errorf("run dir lacks %s: %v", f, err)
		}
	}
}

// A run stopped by a cancel prints its summary with the resume hint, exits 130 and leaves a
// checkpoint that --resume (without --iters: the saved total) continues to the end.
func TestTrainInterruptedExits130(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var o, e bytes.Buffer
	if code := runMain(ctx, trainArgs(run, "--iters", "2"), &o, &e); code != 130 {
		t.Fatalf("exit %d, want 130; stderr %s", code, e.String())
	}
	if !strings.Contains(o.String(), "(interrupted; resume with --resume)") || !strings.Contains(e.String(), "pcl train: interrupted at iteration 0 of 2") {
		t.Errorf("stdout %q, stderr %q: want the summary with the resume hint and the interruption", o.String(), e.String())
	}
	if !runstore.Dir(run).HasCheckpoint() {
		t.Fatal("no checkpoint after the interrupted run")
	}
	o.Reset()
	e.Reset()
	if code := runMain(context.Background(), []string{"train", "--out", run, "--resume"}, &o, &e); code != 0 || !strings.Contains(o.String(), "run "+run+": 2 iterations") {
		t.Fatalf("resume: exit %d, stdout %q, stderr %s", code, o.String(), e.String())
	}
}

// A damaged checkpoint with no fallback is one error, wrapped once at each level: the file named,
// no repeated "train:" or "checkpoint:" segments.
func TestTrainDamagedCheckpointMessage(t *testing.T) {
	for _, damage := range []string{"garbage", "truncated"} {
		run := filepath.Join(t.TempDir(), "run")
		var o, e bytes.Buffer
		if code := runMain(context.Background(), trainArgs(run, "--iters", "2"), &o, &e); code != 0 {
			t.Fatalf("exit %d: %s", code, e.String())
		}
		path := filepath.Join(run, runstore.CheckpointFile)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if damage == "garbage" {
			data = []byte("garbage")
		} else {
			data = data[:len(data)/2]
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		o.Reset()
		e.Reset()
		code := runMain(context.Background(), []string{"train", "--out", run, "--resume", "--iters", "4"}, &o, &e)
		msg := strings.TrimSpace(e.String())
		t.Logf("%s: %s", damage, msg)
		if code != 1 || !strings.HasPrefix(msg, "pcl train: resume: checkpoint "+path+": bad format: ") {
			t.Errorf("%s: exit %d, message %q: want exit 1 and one naming the file", damage, code, msg)
		}
		for _, seg := range []string{"train:", "checkpoint:", "resume:"} {
			if n := strings.Count(msg, seg); n > 1 {
				t.Errorf("%s: %q appears %d times in %q", damage, seg, n, msg)
			}
		}
	}
}

// The end of a run says whether it solved the task, by its greedy evaluations.
func TestTrainVerdict(t *testing.T) {
	cases := []struct {
		threshold string
		want      *regexp.Regexp
	}{
		{"-100", regexp.MustCompile(`(?m)^solved at iteration 0 \(greedy -?\d+\.\d\d ≥ threshold -100\)$`)},
		{"1000", regexp.MustCompile(`(?m)^not solved in 2 iterations: best greedy -?\d+\.\d\d at iteration [01] \(threshold 1000\)$`)},
	}
	for _, tc := range cases {
		var o, e bytes.Buffer
		if code := runMain(context.Background(), trainArgs(filepath.Join(t.TempDir(), "run"), "--iters", "2", "--threshold", tc.threshold), &o, &e); code != 0 {
			t.Fatalf("exit %d: %s", code, e.String())
		}
		if !tc.want.MatchString(o.String()) {
			t.Errorf("threshold %s: stdout %q does not match %s", tc.threshold, o.String(), tc.want)
		}
	}
}

// Piped, `pcl train` prints plain progress lines (start and end at least) and log lines with
// rounded numbers; with --log-format json every line of stderr is a JSON object.
func TestTrainPipedOutput(t *testing.T) {
	long := regexp.MustCompile(`\d\.\d{5,}`)
	stamp := regexp.MustCompile(`"time":"[^"]*"`) // RFC 3339 times have nanoseconds
	for _, format := range []string{"text", "json"} {
		var o, e bytes.Buffer
		if code := runMain(context.Background(), trainArgs(filepath.Join(t.TempDir(), "run"), "--iters", "3", "--log-format", format), &o, &e); code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, e.String())
		}
		lines := strings.Split(strings.TrimSpace(e.String()), "\n")
		var progress int
		for _, l := range lines {
			if long.MatchString(stamp.ReplaceAllString(l, "")) {
				t.Errorf("%s: unrounded number in %q", format, l)
			}
			if format == "json" {
				var m map[string]any
				if err := json.Unmarshal([]byte(l), &m); err != nil || m["msg"] == nil {
					t.Errorf("json: line %q is not a JSON log object: %v", l, err)
				}
				if m["msg"] == "progress" {
					progress++
				}
			} else if strings.HasPrefix(l, "iter ") {
				progress++
			}
		}
		if progress < 2 || !strings.Contains(e.String(), "training") {
			t.Errorf("%s: %d progress lines (want the start and the end at least), stderr:\n%s", format, progress, e.String())
		}
		if format == "text" && (!regexp.MustCompile(`(?m)^iter 0/3 .*started$`).MatchString(e.String()) || !strings.Contains(e.String(), "done in")) {
			t.Errorf("text: no start or end line:\n%s", e.String())
		}
	}
	var o, e bytes.Buffer
	if code := runMain(context.Background(), trainArgs(filepath.Join(t.TempDir(), "run"), "--iters", "1", "--log-format", "yaml"), &o, &e); code != 2 || !strings.Contains(e.String(), "--log-format") {
		t.Errorf("--log-format yaml: exit %d, stderr %q", code, e.String())
	}
}

// A run directory is named by the base of an algorithmic task and by the action grid of any
// other env, whatever network family trains it.
func TestDefaultRunDir(t *testing.T) {
	cases := []struct {
		env       string
		base, grd int
		net       config.Net
		want      string
	}{
		{"Copy-v0", 5, 0, config.NetLSTM, "runs/Copy-v0-base5-sparse-seed1"},
		{"Copy-v0", 5, 0, config.NetMLP, "runs/Copy-v0-base5-sparse-seed1"},
		{"CartPole-v1", 5, 0, config.NetMLP, "runs/CartPole-v1-sparse-seed1"},
		{"HalfCheetah-v5", 5, 3, config.NetMLP, "runs/HalfCheetah-v5-grid3-sparse-seed1"},
	}
	for _, c := range cases {
		cfg := config.Default()
		cfg.Env, cfg.Base, cfg.Grid, cfg.Net = c.env, c.base, c.grd, c.net
		if got := defaultRunDir(cfg); got != c.want {
			t.Errorf("%s base %d grid %d %s: %q, want %q", c.env, c.base, c.grd, c.net, got, c.want)
		}
	}
}

// Long-episode runs get the GC target their replay-dominated heap wants; the algorithmic tasks
// and an explicit GOGC keep theirs.
func TestReplayGCPercent(t *testing.T) {
	mlp := config.Default()
	mlp.Env, mlp.Net = "CartPole-v1", config.NetMLP
	lstm := config.Default()
	for _, tc := range []struct {
		name    string
		cfg     config.Config
		gogc    string
		percent int
		ok      bool
	}{
		{"mlp", mlp, "", 25, true},
		{"mlp with GOGC", mlp, "200", 0, false},
		{"lstm", lstm, "", 0, false},
	} {
		if p, ok := replayGCPercent(tc.cfg, tc.gogc); p != tc.percent || ok != tc.ok {
			t.Errorf("%s: %d %v, want %d %v", tc.name, p, ok, tc.percent, tc.ok)
		}
	}
}

// `pcl train --algo soft` over HalfCheetah's action grid runs soft PCL's grid default (the
// automatic weight with four steps per iteration, a lagged target and the trust region: issue
// 51's chosen configuration), and a short run of it trains without the collapse warning.
func TestSoftGridDefaultTrainsWithoutCollapse(t *testing.T) {
	needServer(t)
	dir := filepath.Join(t.TempDir(), "run")
	var o, e bytes.Buffer
	args := []string{"train", "--out", dir, "--env", "HalfCheetah-v5", "--grid", "3", "--norm-obs", "--algo", "soft", "--iters", "60", "--eval-every", "20"}
	if code := runMain(context.Background(), args, &o, &e); code != 0 {
		t.Fatalf("exit %d:\n%s", code, e.String())
	}
	cfg, err := runstore.Dir(dir).Config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Algo != config.AlgoSoft || !cfg.AlphaAuto || cfg.TrainSteps != 4 || cfg.TargetLag != 0.9 || cfg.TrustRegion != 0.01 || cfg.Form != config.FormSeparate {
		t.Errorf("soft's grid default: algo %s, alpha_auto %v, train_steps %d, target_lag %v, trust_region %v, form %s", cfg.Algo, cfg.AlphaAuto, cfg.TrainSteps, cfg.TargetLag, cfg.TrustRegion, cfg.Form)
	}
	if strings.Contains(e.String(), "policy collapsed") {
		t.Errorf("the short run warned of a collapse:\n%s", e.String())
	}
	rows, err := runstore.Dir(dir).Metrics()
	if err != nil || len(rows) != 60 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	if _, _, ok, err := train.CollapseOf(cfg, rows); ok || err != nil {
		t.Errorf("the collapse check over its metrics: flagged %v, %v", ok, err)
	}
}

// The plain command is the evaluated default: `pcl train --env HalfCheetah-v5` runs over the 3^6
// grid with observation normalisation and says so; an explicit --norm-obs=false is honoured.
func TestPlainCommandIsTheEvaluatedDefault(t *testing.T) {
	needServer(t)
	cases := []struct {
		name  string
		extra []string
		norm  bool
	}{
		{"plain", nil, true},
		{"--norm-obs=false", []string{"--norm-obs=false"}, false},
	}
	for _, tc := range cases {
		dir := filepath.Join(t.TempDir(), "run")
		var o, e bytes.Buffer
		args := append([]string{"train", "--out", dir, "--env", "HalfCheetah-v5", "--iters", "2", "--eval-every", "0", "--progress-every", "0"}, tc.extra...)
		if code := runMain(context.Background(), args, &o, &e); code != 0 {
			t.Fatalf("%s: exit %d:\n%s", tc.name, code, e.String())
		}
		cfg, err := runstore.Dir(dir).Config()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Grid != config.DefaultGrid || cfg.NormObs != tc.norm || !cfg.AlphaAuto || cfg.TrainSteps != 4 {
			t.Errorf("%s: grid %d, norm_obs %v, alpha_auto %v, train_steps %d; want the evaluated default with norm_obs %v", tc.name, cfg.Grid, cfg.NormObs, cfg.AlphaAuto, cfg.TrainSteps, tc.norm)
		}
		if want := fmt.Sprintf("--grid 3 with --norm-obs=%t", tc.norm); !strings.Contains(e.String(), want) {
			t.Errorf("%s: stderr does not say it chose the grid (%q):\n%s", tc.name, want, e.String())
		}
	}
}
