package train

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/nn/checkpoint"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// smallCopyConfig is Copy with base 2 (|A| = 8) at a batch size small enough for CI.
func smallCopyConfig(algo config.Algo, alpha float64) config.Config {
	c := config.Default()
	c.Env, c.Base, c.Algo, c.Alpha = "Copy-v0", 2, algo, alpha
	c.BatchSize, c.Hidden, c.LearningRate = 32, 32, 0.01
	c.EvalEvery, c.EvalEpisodes, c.CheckpointEvery = 5, 32, 20
	c.Iters, c.Seed = 300, 1
	c.RewardThreshold, c.StopAtThreshold = 5, true
	return c
}

// A fixed-seed run of each algorithm on Copy base 2 reaches the reward threshold (a greedy mean
// reward of 5: perfect copies after the curriculum has grown) within the iteration budget.
func TestCopyBase2ReachesThreshold(t *testing.T) {
	if testing.Short() {
		t.Skip("training run")
	}
	cases := []struct {
		algo  config.Algo
		alpha float64
	}{{config.AlgoSparse, 0.05}, {config.AlgoSoft, 0.025}}
	for _, tc := range cases {
		cfg := smallCopyConfig(tc.algo, tc.alpha)
		dir := t.TempDir()
		var plotted RunPlots
		plot := func(p RunPlots) error { plotted = p; return nil }
		sum, err := Run(context.Background(), cfg, Options{Dir: dir, Registry: registry.Default(), Engine: tensor.GonumEngine(), Plot: plot})
		if err != nil {
			t.Fatal(err)
		}
		r, ok := runstore.FirstReach(sum.Rows, cfg.RewardThreshold)
		t.Logf("%s: %d iterations, %.3fs/iter, reached=%v at %d (greedy %.2f, curriculum %d)", tc.algo, sum.Iterations, sum.SecondsPerIt, ok, r.Iteration, r.GreedyReward, r.Curriculum)
		if !ok {
			t.Errorf("%s did not reach greedy reward %v in %d iterations (last greedy %v)", tc.algo, cfg.RewardThreshold, cfg.Iters, sum.LastGreedy)
		}
		for _, f := range []string{runstore.ConfigFile, runstore.MetricsFile, runstore.CheckpointFile} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("run dir lacks %s: %v", f, err)
			}
		}
		if plotted.Dir != dir || plotted.EnvSteps || plotted.Actions != 8 || len(plotted.Rows) != sum.Iterations {
			t.Errorf("Plot drew dir %q, env steps %v, %d actions, %d rows; want %q, false, 8, %d",
				plotted.Dir, plotted.EnvSteps, plotted.Actions, len(plotted.Rows), dir, sum.Iterations)
		}
	}
}

// resumeConfig is Copy base 2 with replay and greedy evaluation on, whose shared curriculum first
// levels up at iteration 24 and then climbs every iteration or two.
func resumeConfig() config.Config {
	cfg := smallCopyConfig(config.AlgoSparse, 0.05)
	cfg.EvalEvery, cfg.EvalEpisodes, cfg.CheckpointEvery, cfg.StopAtThreshold, cfg.Iters = 3, 8, 10, false, 30
	return cfg
}

// sameRows reports the first difference between two runs' metrics, bit for bit (wall time aside).
func sameRows(t *testing.T, what string, want, got []runstore.Row) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		w.WallSeconds, g.WallSeconds = 0, 0
		if fmt.Sprintf("%#v", w) != fmt.Sprintf("%#v", g) {
			t.Fatalf("%s: iteration %d differs:\nuninterrupted %+v\nresumed       %+v", what, i, w, g)
		}
	}
}

// Stopping a run after a curriculum level-up and resuming it gives, bit for bit, the rows of the
// uninterrupted run: parameters and Adam state, the training curriculum (min_length, shortfall
// record, pending shortfalls) and the replay buffer all come back from the checkpoint; the
// evaluation env copies the training curriculum. Dropping any of them changes the rows after the
// resume, and a checkpoint written before evaluation copied it (with an eval_curriculum field)
// still resumes exactly, the field ignored.
func TestResumeContinuesExactly(t *testing.T) {
	cfg := resumeConfig()
	reg := registry.Default()
	fullDir := t.TempDir()
	full, err := Run(context.Background(), cfg, Options{Dir: fullDir, Registry: reg, Engine: tensor.GonumEngine()})
	if err != nil {
		t.Fatal(err)
	}
	// The checkpoint at the split holds min_length 3 (a level-up before it), the reset that starts
	// the resumed part levels up again while recording the pending shortfalls, and more follow.
	const split = 25
	if first, saved, last := full.Rows[0].Curriculum, full.Rows[split-1].Curriculum, full.Rows[len(full.Rows)-1].Curriculum; first == saved || saved == full.Rows[split].Curriculum || full.Rows[split].Curriculum == last {
		t.Fatalf("the curriculum must level up before the split at %d, at it and after it: %d, %d, %d, %d (retune resumeConfig)",
			split, first, saved, full.Rows[split].Curriculum, last)
	}
	halfDir := t.TempDir()
	half := cfg
	half.Iters = split
	if _, err := Run(context.Background(), half, Options{Dir: halfDir, Registry: reg, Engine: tensor.GonumEngine()}); err != nil {
		t.Fatal(err)
	}
	dir := copyDir(t, halfDir)
	meta, err := runstore.Dir(dir).Meta()
	if err != nil {
		t.Fatal(err)
	}
	if meta.TrainCurriculum == nil || meta.ReplayFile != runstore.ReplayFileName(split) {
		t.Fatalf("checkpoint meta lacks the curricula or the replay file: %+v", meta)
	}
	if got := meta.TrainCurriculum.Curricula[0].MinLength; got != full.Rows[split-1].Curriculum {
		t.Fatalf("saved training min_length %d, the uninterrupted run has %d at iteration %d", got, full.Rows[split-1].Curriculum, split-1)
	}
	resumed, err := Run(context.Background(), cfg, Options{Dir: dir, Resume: true, Registry: reg, Engine: tensor.GonumEngine()})
	if err != nil {
		t.Fatal(err)
	}
	sameRows(t, "resumed run", full.Rows, resumed.Rows)
	onDisk, err := runstore.ReadMetrics(filepath.Join(dir, runstore.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	sameRows(t, "resumed metrics.csv", full.Rows, onDisk)

	// An older checkpoint carries the evaluation env's own curriculum, stale by now: ignored.
	oldDir := copyDir(t, halfDir)
	addMetaField(t, oldDir, "eval_curriculum", `{"per_copy":false,"curricula":[{"min_length":2,"shortfalls":[-1]}],"pending":[null,null,null,null,null,null,null,null]}`)
	old, err := Run(context.Background(), cfg, Options{Dir: oldDir, Resume: true, Registry: reg, Engine: tensor.GonumEngine()})
	if err != nil {
		t.Fatalf("resuming a checkpoint with an eval_curriculum field: %v", err)
	}
	sameRows(t, "resumed old-format checkpoint", full.Rows, old.Rows)
	fullCur, resumedCur := finalCurricula(t, fullDir), finalCurricula(t, dir)
	if fullCur != resumedCur {
		t.Errorf("final curricula differ:\nuninterrupted %s\nresumed       %s", fullCur, resumedCur)
	}
	a, errA := os.ReadFile(filepath.Join(fullDir, runstore.ReplayFileName(cfg.Iters)))
	b, errB := os.ReadFile(filepath.Join(dir, runstore.ReplayFileName(cfg.Iters)))
	if errA != nil || errB != nil || !bytes.Equal(a, b) {
		t.Errorf("final replay buffers differ (%v, %v)", errA, errB)
	}
	if got, want := replayFiles(t, dir), []string{runstore.ReplayFileName(split), runstore.ReplayFileName(cfg.Iters)}; !slices.Equal(got, want) {
		t.Errorf("run dir holds replay files %v, want %v: the last checkpoint's and the fallback's", got, want)
	}

	// Each piece of restored state matters: resuming without it diverges after the split.
	drops := []struct {
		name string
		drop func(m *runstore.Meta)
	}{
		{"replay buffer", func(m *runstore.Meta) { m.ReplayFile = "" }},
		{"training curriculum", func(m *runstore.Meta) { m.TrainCurriculum = nil }},
		{"pending shortfalls", func(m *runstore.Meta) { m.TrainCurriculum.Pending = make([]*float64, len(m.TrainCurriculum.Pending)) }},
	}
	for _, d := range drops {
		dir := copyDir(t, halfDir)
		rewriteMeta(t, dir, d.drop)
		inexact, err := Run(context.Background(), cfg, Options{Dir: dir, Resume: true, Registry: reg, Engine: tensor.GonumEngine()})
		if err != nil {
			t.Fatal(err)
		}
		same := finalCurricula(t, dir) == fullCur
		for i := split; i < cfg.Iters; i++ {
			w, g := full.Rows[i], inexact.Rows[i]
			w.WallSeconds, g.WallSeconds = 0, 0
			same = same && fmt.Sprintf("%#v", w) == fmt.Sprintf("%#v", g)
		}
		if same {
			t.Errorf("resuming without the %s still matched the uninterrupted run: the test does not exercise it", d.name)
		}
	}

	// A cancelled context saves and stops cleanly.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sum, err := Run(ctx, cfg, Options{Dir: t.TempDir(), Registry: reg, Engine: tensor.GonumEngine()})
	if err != nil || !sum.Interrupted {
		t.Fatalf("cancelled run: err %v, interrupted %v", err, sum.Interrupted)
	}
}

// copyDir copies the files of a run dir into a new temporary dir.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// finalCurricula is the JSON of the curricula saved in dir's checkpoint.
func finalCurricula(t *testing.T, dir string) string {
	t.Helper()
	m, err := runstore.Dir(dir).Meta()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(m.TrainCurriculum)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// rewriteMeta edits the metadata of dir's checkpoint in place (parameters unchanged).
func rewriteMeta(t *testing.T, dir string, edit func(m *runstore.Meta)) {
	t.Helper()
	path := filepath.Join(dir, runstore.CheckpointFile)
	f, err := checkpoint.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var m runstore.Meta
	if err := json.Unmarshal(f.Meta, &m); err != nil {
		t.Fatal(err)
	}
	edit(&m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	params := make([]*nn.Param, len(f.Tensors))
	for i, tn := range f.Tensors {
		params[i] = &nn.Param{Name: tn.Name, Value: tn.Value}
	}
	if err := checkpoint.Save(path, params, b); err != nil {
		t.Fatal(err)
	}
}

// addMetaField adds a raw JSON field to the metadata of dir's checkpoint (parameters unchanged).
func addMetaField(t *testing.T, dir, name, value string) {
	t.Helper()
	path := filepath.Join(dir, runstore.CheckpointFile)
	f, err := checkpoint.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(f.Meta, &m); err != nil {
		t.Fatal(err)
	}
	m[name] = json.RawMessage(value)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	params := make([]*nn.Param, len(f.Tensors))
	for i, tn := range f.Tensors {
		params[i] = &nn.Param{Name: tn.Name, Value: tn.Value}
	}
	if err := checkpoint.Save(path, params, b); err != nil {
		t.Fatal(err)
	}
}
