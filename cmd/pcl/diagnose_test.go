package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"diagnose", "--iters", "1"}, "--out is required"},
		{[]string{"diagnose", "--overlay", png}, "give the probes with --probe"},
		{[]string{"diagnose", "--overlay", png, "--metric", "nope", "--probe", a}, `no column "nope"`},
		{[]string{"diagnose", "--overlay", png, "--probe", filepath.Join(dir, "missing")}, "no such file"},
	} {
		if out, err := runPCL(t, c.args...); err == nil || !strings.Contains(out, c.msg) {
			t.Errorf("pcl %s: %q, want a failure containing %q", strings.Join(c.args, " "), out, c.msg)
		}
	}
}
