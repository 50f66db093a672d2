package train

import (
	"math"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/internal/tfevents"
)

// A run writes one event file per process: the config and run.json as text, every metrics row at its
// iteration, and on resume a SessionLog START at the iteration it resumes from.
func TestRunWritesEventFiles(t *testing.T) {
	cfg := config.Default()
	cfg.Base, cfg.BatchSize, cfg.EvalEvery, cfg.EvalEpisodes, cfg.CheckpointEvery, cfg.Iters = 2, 8, 2, 2, 2, 3
	dir := t.TempDir()
	if _, err := quickRun(t, dir, cfg, false); err != nil {
		t.Fatal(err)
	}
	cfg.Iters = 5
	sum, err := quickRun(t, dir, cfg, true)
	if err != nil {
		t.Fatal(err)
	}
	files, err := tfevents.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("%d event files, want one per process", len(files))
	}
	for i, from := range []int64{0, 3} {
		evs := files[i]
		if len(evs) < 3 || !evs[1].Session || evs[1].Step != from || !strings.Contains(evs[2].Text, `"env": "Copy-v0"`) {
			t.Fatalf("file %d starts %+v, want the version, a session start at %d and the config", i, evs[:min(3, len(evs))], from)
		}
		var rows []tfevents.Event
		for _, ev := range evs[3:] {
			if len(ev.Scalars) > 0 {
				rows = append(rows, ev)
			} else if !strings.Contains(ev.Text, `"sessions"`) {
				t.Errorf("file %d: unexpected event %+v", i, ev)
			}
		}
		want := sum.Rows[from:][:len(rows)]
		if len(rows) != []int{3, 2}[i] {
			t.Fatalf("file %d: %d rows", i, len(rows))
		}
		for j, ev := range rows {
			r := want[j]
			if ev.Step != int64(r.Iteration) || ev.Scalars["metrics/loss"] != float32(r.Loss) || ev.Scalars["metrics/env_steps"] != float32(r.EnvSteps) {
				t.Errorf("file %d event %+v, row %+v", i, ev, r)
			}
			if _, ok := ev.Scalars["metrics/greedy_reward"]; ok != !math.IsNaN(r.GreedyReward) {
				t.Errorf("file %d iteration %d: greedy_reward present %v, row %v", i, r.Iteration, ok, r.GreedyReward)
			}
		}
	}
}
