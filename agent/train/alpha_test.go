package train

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/agent/weight"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// A scheduled run trains each iteration at the released code's max(start·decay^(it/100), floor),
// logs it in the alpha column, and trains differently from a fixed-alpha run.
func TestAlphaScheduleInTheLoop(t *testing.T) {
	cfg := smallCopyConfig(config.AlgoSparse, 0.05)
	cfg.Iters, cfg.StopAtThreshold, cfg.EvalEvery = 6, false, 0
	fixed, err := Run(context.Background(), cfg, Options{Dir: t.TempDir(), Registry: registry.Default(), Engine: tensor.GonumEngine()})
	if err != nil {
		t.Fatal(err)
	}
	cfg.AlphaStart, cfg.AlphaDecay = 0.5, 1e-4
	sched, err := Run(context.Background(), cfg, Options{Dir: t.TempDir(), Registry: registry.Default(), Engine: tensor.GonumEngine()})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := weight.NewDecay(0.5, 1e-4, 0.05)
	for i, r := range sched.Rows {
		if want := d.Alpha(i, weight.Stats{}); r.Alpha != want {
			t.Errorf("iteration %d: alpha %v, want %v", i, r.Alpha, want)
		}
		if fixed.Rows[i].Alpha != 0.05 {
			t.Errorf("fixed run, iteration %d: alpha %v", i, fixed.Rows[i].Alpha)
		}
	}
	if sched.Rows[1].Loss == fixed.Rows[1].Loss {
		t.Error("the scheduled alpha did not reach the loss")
	}
}

// The loop trains each iteration at the automatic weight's alpha for the max-prob it sampled, and
// a run stopped and resumed continues it bit for bit.
func TestAlphaAutoInTheLoop(t *testing.T) {
	cfg := resumeConfig()
	cfg.AlphaAuto = true
	reg := registry.Default()
	full, err := Run(context.Background(), cfg, Options{Dir: t.TempDir(), Registry: reg, Engine: tensor.GonumEngine()})
	if err != nil {
		t.Fatal(err)
	}
	// The loop's alpha is the controller's, fed each iteration's sampled max-prob.
	auto, _ := weight.NewAuto(weight.DefaultAuto(cfg.Alpha))
	moved := 0
	for i, r := range full.Rows {
		if want := auto.Alpha(i, weight.Stats{MaxProb: r.MaxProb}); r.Alpha != want {
			t.Fatalf("iteration %d: alpha %v, the controller gives %v (max-prob %v, target %v)", i, r.Alpha, want, r.MaxProb, auto.Target(i))
		}
		if r.Alpha != cfg.Alpha {
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("alpha never moved")
	}
	const split = 17
	half := cfg
	half.Iters = split
	dir := t.TempDir()
	if _, err := Run(context.Background(), half, Options{Dir: dir, Registry: reg, Engine: tensor.GonumEngine()}); err != nil {
		t.Fatal(err)
	}
	meta, err := runstore.Dir(dir).Meta()
	if err != nil || meta.AutoAlpha == nil {
		t.Fatalf("checkpoint meta lacks the automatic weight's state: %v, %+v", err, meta)
	}
	resumed, err := Run(context.Background(), cfg, Options{Dir: dir, Resume: true, Registry: reg, Engine: tensor.GonumEngine()})
	if err != nil {
		t.Fatal(err)
	}
	sameRows(t, "resumed automatic-alpha run", full.Rows, resumed.Rows)
}

// The collapse warning fires once on a run that sat on one action from the start, and names its
// levers through Options.FieldName (pcl: the flags), or by the config fields without one.
func TestCollapseWarningNamesLevers(t *testing.T) {
	for _, c := range []struct {
		name func(string) string
		want string
	}{
		{nil, "try a larger alpha (3x or more) or alpha_auto"},
		{func(f string) string { return "--" + strings.ReplaceAll(f, "_", "-") }, "try a larger --alpha (3x or more) or --alpha-auto"},
	} {
		var out bytes.Buffer
		cfg := smallCopyConfig(config.AlgoSparse, 0.05)
		cfg.Iters = 100
		a, err := newAlphaControl(cfg, slog.New(slog.NewTextHandler(&out, nil)), Options{FieldName: c.name}.fieldName)
		if err != nil {
			t.Fatal(err)
		}
		for it := range cfg.Iters {
			a.observe(runstore.Row{Iteration: it, Support: 1, MaxProb: 1, MeanReward: -0.5})
		}
		if got := strings.Count(out.String(), "policy collapsed"); got != 1 {
			t.Fatalf("%d warnings, want 1:\n%s", got, out.String())
		}
		if !strings.Contains(out.String(), c.want) {
			t.Errorf("warning %q does not say %q", out.String(), c.want)
		}
	}
}
