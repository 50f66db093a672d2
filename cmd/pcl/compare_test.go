package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/train"
)

func TestParseWeights(t *testing.T) {
	def := func(b int) float64 { return float64(b) / 100 }
	cases := []struct {
		in    string
		bases []int
		want  map[int]float64
		err   string
	}{
		{"", []int{5, 40}, map[int]float64{5: 0.05, 40: 0.4}, ""},
		{"0.1", []int{5, 40}, map[int]float64{5: 0.1, 40: 0.1}, ""},
		{"5:0.05, 40:0.02", []int{5, 40}, map[int]float64{5: 0.05, 40: 0.02}, ""},
		{"5:0.05", []int{5, 40}, nil, "base 40 has no weight"},
		{"5:0.05,40:0.1,7:0.1", []int{5, 40}, nil, "base 7 is not among"},
		{"5:0.05,5:0.1", []int{5}, nil, "base 5 has two weights"},
		{"5=0.05", []int{5}, nil, "neither a number nor"},
		{"5:x", []int{5}, nil, `"5:x" is not base:weight`},
	}
	for _, tc := range cases {
		got, err := parseWeights(tc.in, "sparse-alpha", tc.bases, def)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "--sparse-alpha") {
				t.Errorf("%q: error %v, want one naming --sparse-alpha and %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("%q: %v, want %v", tc.in, got, tc.want)
		}
		for b, w := range tc.want {
			if got[b] != w {
				t.Errorf("%q: base %d weight %v, want %v", tc.in, b, got[b], w)
			}
		}
	}
}

// The flags a `pcl train` subprocess gets reproduce the config exactly, non-default fields and
// booleans set to false included.
func TestConfigArgsRoundTrip(t *testing.T) {
	c := config.Default()
	c.Env, c.Base, c.Algo, c.Alpha, c.Replay, c.Curriculum = "Copy-v0", 3, config.AlgoSoft, 0.0123456789, false, config.CurriculumPerCopy
	c.LearningRate, c.Seed, c.StopAtThreshold, c.RewardThreshold = 1.0/3, 42, true, 2.5
	c.Net = config.NetLSTM // parseTrainConfig resolves "auto"
	var got config.Config
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	got = config.Default()
	if _, err := parseTrainConfig(fs, configArgs(c), &got); err != nil {
		t.Fatal(err)
	}
	if d := config.Diff(c, got); d != nil {
		t.Errorf("config after the round trip through flags differs: %v", d)
	}
}

func TestCompareUsageErrors(t *testing.T) {
	out := t.TempDir()
	cases := []struct {
		name string
		args []string
		msg  string
	}{
		{"algo", []string{"--algo", "soft"}, "--sparse-alpha and --soft-alpha"},
		{"alpha", []string{"--alpha", "0.1"}, "--sparse-alpha and --soft-alpha"},
		{"base", []string{"--base", "2"}, "--base does not apply: compare takes its bases from --bases"},
		{"tsallis-q", []string{"--tsallis-q", "1.5"}, "--tsallis-q does not apply"},
		{"mlp flag", []string{"--grid", "3"}, "--grid does not apply"},
		{"base without weight", []string{"--bases", "2,3", "--sparse-alpha", "2:0.05"}, "--sparse-alpha: base 3 has no weight"},
		{"weight of another base", []string{"--bases", "2", "--soft-alpha", "2:0.1,5:0.1"}, "--soft-alpha: base 5 is not among"},
		{"bad weight", []string{"--bases", "2", "--soft-alpha", "abc"}, "--soft-alpha"},
		{"invalid weight", []string{"--bases", "2", "--soft-alpha", "-1"}, "alpha"},
		{"jobs", []string{"--jobs", "0"}, "--jobs"},
		{"seeds", []string{"--seeds", "0"}, "--seeds"},
	}
	for _, tc := range cases {
		var o, e bytes.Buffer
		args := append([]string{"compare", "--out", out, "--iters", "1"}, tc.args...)
		if code := runMain(context.Background(), args, &o, &e); code != 2 || !strings.Contains(e.String(), tc.msg) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and a message with %q", tc.name, code, e.String(), tc.msg)
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("usage errors left files in --out: %v", entries)
	}
}

func TestSummariseRun(t *testing.T) {
	nan := math.NaN()
	row := func(it int, mean, greedy, sup, mp float64) train.Row {
		return train.Row{Iteration: it, WallSeconds: float64(it+1) * 0.5, MeanReward: mean, GreedyReward: greedy, Support: sup, MaxProb: mp}
	}
	// 20 iterations: the final window is the last 2; the sampled reward reaches 3 at iteration 5,
	// the greedy reward at iteration 8 (evaluated every 4).
	var rows []train.Row
	for it := range 20 {
		g := nan
		if it%4 == 0 {
			g = float64(it) / 2
		}
		rows = append(rows, row(it, math.Min(float64(it)/2+0.5, 6), g, 10-float64(it)/4, float64(it)/20))
	}
	cases := []struct {
		name                    string
		rows                    []train.Row
		budget                  int
		final, support, maxProb float64
		best                    float64
		trainAt, greedyAt       int // -1: not reached
		secPerIt                float64
	}{
		{"fixed budget", rows, 20, 6, (10 - 18.0/4 + 10 - 19.0/4) / 2, (18.0 + 19) / 40, 8, 5, 8, 0.5},
		{"stopped early", rows[:9], 20, (4 + 4.5) / 2, (10 - 7.0/4 + 10 - 8.0/4) / 2, (7.0 + 8) / 40, 4, 5, 8, 0.5},
		{"never reached", rows[:4], 20, (1.5 + 2) / 2, (10 - 2.0/4 + 10 - 3.0/4) / 2, (2.0 + 3) / 40, 0, -1, -1, 0.5},
		{"budget below 10", rows[:3], 3, 1.5, 10 - 2.0/4, 2.0 / 20, 0, -1, -1, 0.5},
	}
	for _, tc := range cases {
		s := summariseRun(tc.rows, tc.budget, 3)
		close := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
		if !close(s.final, tc.final) || !close(s.support, tc.support) || !close(s.maxProb, tc.maxProb) || !close(s.bestGreedy, tc.best) || !close(s.secPerIt, tc.secPerIt) {
			t.Errorf("%s: final %v support %v max_prob %v best %v s/it %v; want %v %v %v %v %v", tc.name,
				s.final, s.support, s.maxProb, s.bestGreedy, s.secPerIt, tc.final, tc.support, tc.maxProb, tc.best, tc.secPerIt)
		}
		for _, c := range []struct {
			what string
			got  *train.Row
			want int
		}{{"training reward", s.trainReach, tc.trainAt}, {"greedy reward", s.greedyReach, tc.greedyAt}} {
			switch {
			case c.want < 0 && c.got != nil:
				t.Errorf("%s: %s reached the threshold at %d, want never", tc.name, c.what, c.got.Iteration)
			case c.want >= 0 && (c.got == nil || c.got.Iteration != c.want):
				t.Errorf("%s: %s reached the threshold at %+v, want iteration %d", tc.name, c.what, c.got, c.want)
			}
		}
	}
	// The table takes medians over the seeds that reached the threshold and counts them.
	seeds := []runSummary{summariseRun(rows, 20, 3), summariseRun(rows[:4], 20, 3), summariseRun(rows[2:], 20, 3)}
	its, secs, k := reachCells(seeds, func(s runSummary) *train.Row { return s.trainReach })
	if its != "6" || secs != "3.0" || k != "2/3" {
		t.Errorf("reach cells %q %q %q, want 6 3.0 2/3", its, secs, k)
	}
}

// compare --jobs 2 trains in `pcl train` subprocesses (this test binary, see TestMain) with
// per-base weights: the runs get exactly the configs and, the arithmetic being deterministic, the
// training metrics of in-process runs; the figures and the table are written, and re-running
// compare on the finished runs reproduces summary.md byte for byte.
func TestCompareJobsAndSummary(t *testing.T) {
	t.Setenv(asPCLEnv, "1")
	t.Setenv("SPARSEPCL_BLAS", "gonum")
	args := func(out string, extra ...string) []string {
		return append([]string{"compare", "--out", out, "--bases", "2,3", "--seeds", "2", "--batch", "16", "--hidden", "16",
			"--iters", "4", "--eval-every", "2", "--eval-episodes", "4", "--sparse-alpha", "2:0.05,3:0.07", "--soft-alpha", "0.03"}, extra...)
	}
	outs := map[string]string{"1": t.TempDir(), "2": t.TempDir()}
	for _, jobs := range []string{"1", "2"} {
		var o, e bytes.Buffer
		if code := runMain(context.Background(), args(outs[jobs], "--jobs", jobs), &o, &e); code != 0 {
			t.Fatalf("--jobs %s: exit %d; stderr %s", jobs, code, e.String())
		}
		for _, want := range []string{"| 2 | 8 | sparse | 0.05 | 2 |", "| 3 | 12 | sparse | 0.07 | 2 |", "| 2 | 8 | soft | 0.03 | 2 |", "| 3 | 12 | soft | 0.03 | 2 |"} {
			if !strings.Contains(o.String(), want) {
				t.Errorf("--jobs %s: summary lacks %q:\n%s", jobs, want, o.String())
			}
		}
	}
	out := outs["2"]
	for _, f := range []string{"summary.md", rewardFigure(2), maxProbFigure(2), rewardFigure(3), maxProbFigure(3), "logs/base3-soft-seed2.log"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("compare --jobs 2 did not write %s: %v", f, err)
		}
	}
	for _, run := range []string{"base2/sparse-seed1", "base2/soft-seed2", "base3/sparse-seed2", "base3/soft-seed1"} {
		a, errA := config.ReadFile(filepath.Join(outs["1"], run, train.ConfigFile))
		b, errB := config.ReadFile(filepath.Join(out, run, train.ConfigFile))
		if errA != nil || errB != nil {
			t.Fatalf("%s: %v, %v", run, errA, errB)
		}
		if d := config.Diff(a, b); d != nil {
			t.Errorf("%s: the subprocess run has another config than the in-process one: %v", run, d)
		}
		ra, errA := train.ReadMetrics(filepath.Join(outs["1"], run, train.MetricsFile))
		rb, errB := train.ReadMetrics(filepath.Join(out, run, train.MetricsFile))
		if errA != nil || errB != nil || len(ra) != 4 || len(rb) != 4 {
			t.Fatalf("%s: %d and %d rows (%v, %v), want 4", run, len(ra), len(rb), errA, errB)
		}
		for i := range ra {
			ra[i].WallSeconds, rb[i].WallSeconds = 0, 0
			// Printed, NaN equals NaN: the rows match where both lack a value.
			if fmt.Sprintf("%+v", ra[i]) != fmt.Sprintf("%+v", rb[i]) {
				t.Errorf("%s iteration %d: in-process %+v, subprocess %+v", run, i, ra[i], rb[i])
			}
		}
	}
	before, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	var o, e bytes.Buffer
	if code := runMain(context.Background(), args(out, "--jobs", "2"), &o, &e); code != 0 || strings.Count(o.String(), "reused") != 8 {
		t.Fatalf("re-run: exit %d, stdout %s, stderr %s", code, o.String(), e.String())
	}
	after, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil || !bytes.Equal(before, after) {
		t.Errorf("summary.md from the finished runs differs (%v):\n%s\n%s", err, before, after)
	}
}

// The band of a figure is the mean, min and max over the seeds that have each iteration.
func TestSeedBand(t *testing.T) {
	runs := [][]train.Row{
		{{Iteration: 0, MeanReward: 1}, {Iteration: 1, MeanReward: 3}, {Iteration: 2, MeanReward: 5}},
		{{Iteration: 0, MeanReward: 3}, {Iteration: 1, MeanReward: -1}}, // stopped early
	}
	b := seedBand("sparse", algoColours[0], runs, func(r train.Row) float64 { return r.MeanReward })
	want := struct{ x, mean, lo, hi []float64 }{[]float64{0, 1, 2}, []float64{2, 1, 5}, []float64{1, -1, 5}, []float64{3, 3, 5}}
	for i, got := range [][]float64{b.X, b.Mean, b.Lo, b.Hi} {
		w := [][]float64{want.x, want.mean, want.lo, want.hi}[i]
		if len(got) != len(w) {
			t.Fatalf("series %d: %v, want %v", i, got, w)
		}
		for j := range w {
			if got[j] != w[j] {
				t.Errorf("series %d: %v, want %v", i, got, w)
				break
			}
		}
	}
}

// A cancelled compare reports the interruption with exit code 130, with either kind of worker.
func TestCompareCancelled(t *testing.T) {
	t.Setenv(asPCLEnv, "1")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, jobs := range []string{"1", "2"} {
		var o, e bytes.Buffer
		args := []string{"compare", "--out", t.TempDir(), "--bases", "2", "--seeds", "1", "--batch", "4", "--hidden", "8", "--iters", "2", "--jobs", jobs}
		if code := runMain(ctx, args, &o, &e); code != exitInterrupted || !strings.Contains(e.String(), "interrupted") {
			t.Errorf("--jobs %s: exit %d, stderr %q; want %d and an interruption", jobs, code, e.String(), exitInterrupted)
		}
	}
}
