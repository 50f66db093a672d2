package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/internal/lab/diag"
)

func TestDiagnoseProbeAndOverlay(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, d := range []string{a, b} {
		out, err := runPCL(t, "diagnose", "--env", "Copy-v0", "--base", "3", "--batch", "8", "--hidden", "8", "--iters", "3", "--every", "1", "--expert", "4", "--out", d)
		if err != nil || !strings.Contains(out, "iteration 2: reward") {
			t.Fatalf("diagnose: %s", out)
		}
	}
	for _, f := range []string{"probe.csv", "config.json", "writing.png", "weights.png", "symbols.png"} {
		if _, err := os.Stat(filepath.Join(a, f)); err != nil {
			t.Error(err)
		}
	}
	png := filepath.Join(dir, "o.png")
	if out, err := runPCL(t, "diagnose", "--overlay", png, "--metric", "write_frac", "--probe", "first=one="+a, "--probe", b); err != nil {
		t.Fatalf("overlay: %s", out)
	}
	if _, err := os.Stat(png); err != nil {
		t.Error(err)
	}
	// --table: one row per name, the seeds of a name together; the short probes lack iteration 30.
	c := filepath.Join(dir, "c")
	if out, err := runPCL(t, "diagnose", "--env", "Copy-v0", "--base", "3", "--batch", "8", "--hidden", "8", "--iters", "31", "--every", "5", "--out", c); err != nil {
		t.Fatalf("diagnose: %s", out)
	}
	md := filepath.Join(dir, "levers.md")
	if out, err := runPCL(t, "diagnose", "--table", md, "--probe", "lever="+c, "--probe", "lever="+c, "--probe", "other="+c); err != nil {
		t.Fatalf("table: %s", out)
	}
	text, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	if rows := strings.Split(strings.TrimSpace(string(text)), "\n"); len(rows) != 4 || !strings.HasPrefix(rows[2], "| lever | 2 | 31 |") || !strings.HasPrefix(rows[3], "| other | 1 | 31 |") {
		t.Errorf("lever table:\n%s", text)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"diagnose", "--iters", "1"}, "--out is required"},
		{[]string{"diagnose", "--table", md, "--probe", a}, "iteration 30 was not inspected"},
		{[]string{"diagnose", "--table", md, "--overlay", png, "--probe", a}, "one of --overlay and --table"},
		{[]string{"diagnose", "--overlay", png}, "give the probes with --probe"},
		{[]string{"diagnose", "--overlay", png, "--metric", "nope", "--probe", a}, `no column "nope"`},
		{[]string{"diagnose", "--overlay", png, "--probe", filepath.Join(dir, "missing")}, "no such file"},
	} {
		if out, err := runPCL(t, c.args...); err == nil || !strings.Contains(out, c.msg) {
			t.Errorf("pcl %s: %q, want a failure containing %q", strings.Join(c.args, " "), out, c.msg)
		}
	}
}

// --from continues a run of pcl train in a copy under --out/run, which pcl play can then read;
// it takes no config flag but --iters.
func TestDiagnoseFromRun(t *testing.T) {
	dir := t.TempDir()
	src, out := filepath.Join(dir, "src"), filepath.Join(dir, "probe")
	if o, err := runPCL(t, "train", "--env", "Copy-v0", "--base", "3", "--batch", "8", "--hidden", "8", "--iters", "2", "--eval-every", "0", "--out", src); err != nil {
		t.Fatalf("train: %s", o)
	}
	o, err := runPCL(t, "diagnose", "--from", src, "--iters", "2", "--every", "1", "--expert", "4", "--out", out)
	if err != nil || !strings.Contains(o, "iteration 3: reward") {
		t.Fatalf("diagnose --from: %s", o)
	}
	if o, err := runPCL(t, "play", "--run", filepath.Join(out, "run"), "--input", "1,2", "--delay", "1ms"); err != nil || !strings.Contains(o, "after 4 iterations") {
		t.Errorf("play on the probed copy: %s", o)
	}
	if o, err := runPCL(t, "diagnose", "--from", src, "--iters", "2", "--alpha", "0.1", "--out", filepath.Join(dir, "p2")); err == nil || !strings.Contains(o, "--alpha is not taken") {
		t.Errorf("diagnose --from with --alpha: %q, want a refusal naming it", o)
	}
	// The replay's rewarded writes of a symbol: the count agrees with the buffer read directly.
	buf, _, err := runstore.Dir(src).Replay()
	if err != nil {
		t.Fatal(err)
	}
	want := diag.ReplayWrites(buf, diag.Task{Moves: 2, Base: 3}, 1)
	o, err = runPCL(t, "diagnose", "--from", src, "--replay-writes", "1")
	if err != nil || !strings.Contains(o, fmt.Sprintf("replay at iteration 2: %d of %d episodes hold a rewarded write of 1", want.Holding, want.Episodes)) || want.Episodes != 16 {
		t.Errorf("diagnose --replay-writes 1: %q (want %d of %d, 16 stored)", o, want.Holding, want.Episodes)
	}
	for _, args := range [][]string{{"--replay-writes", "1"}, {"--from", src, "--replay-writes", "3"}} {
		if o, err := runPCL(t, append([]string{"diagnose"}, args...)...); err == nil {
			t.Errorf("diagnose %v accepted: %q", args, o)
		}
	}
}
