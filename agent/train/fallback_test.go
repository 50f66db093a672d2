package train

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// truncate cuts the file name of dir to half its size.
func truncate(t *testing.T, dir, name string) {
	t.Helper()
	path := filepath.Join(dir, name)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, st.Size()/2); err != nil {
		t.Fatal(err)
	}
}

// replayFiles lists the replay files of dir.
func replayFiles(t *testing.T, dir string) []string {
	t.Helper()
	fs, err := filepath.Glob(filepath.Join(dir, "replay-*.bin"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range fs {
		fs[i] = filepath.Base(fs[i])
	}
	return fs
}

// Every checkpoint keeps the one before as the fallback, with its replay file. When the newest
// checkpoint or its replay file is damaged, a resume continues from the fallback with a warning
// naming the damaged file, cuts metrics.csv back to the fallback's iteration, and then matches the
// uninterrupted run bit for bit; the checkpoints after it rotate as usual. When the fallback is
// damaged too, the resume fails naming both and changes no file.
func TestResumeFromFallback(t *testing.T) {
	cfg := smallCopyConfig(config.AlgoSparse, 0.05)
	cfg.Iters, cfg.CheckpointEvery, cfg.EvalEvery, cfg.EvalEpisodes, cfg.StopAtThreshold = 6, 2, 2, 8, false
	reg := registry.Default()
	run := func(dir string, c config.Config, resume bool, log *bytes.Buffer) (Summary, error) {
		return Run(context.Background(), c, Options{Dir: dir, Resume: resume, Registry: reg, Engine: tensor.GonumEngine(),
			Logger: slog.New(slog.NewTextHandler(log, nil))})
	}
	var discard bytes.Buffer
	full, err := run(t.TempDir(), cfg, false, &discard)
	if err != nil {
		t.Fatal(err)
	}
	partDir := t.TempDir()
	part := cfg
	part.Iters = 4 // checkpoints at 2 (the fallback) and 4 (the newest)
	if _, err := run(partDir, part, false, &discard); err != nil {
		t.Fatal(err)
	}
	if got, want := replayFiles(t, partDir), []string{runstore.ReplayFileName(2), runstore.ReplayFileName(4)}; !slices.Equal(got, want) {
		t.Fatalf("replay files %v, want %v (the newest checkpoint's and the fallback's)", got, want)
	}
	if _, meta, err := runstore.ReadCheckpoint(filepath.Join(partDir, runstore.FallbackFile)); err != nil || meta.Iteration != 2 || meta.ReplayFile != runstore.ReplayFileName(2) {
		t.Fatalf("fallback: iteration %d, replay %q, %v; want iteration 2 with %s", meta.Iteration, meta.ReplayFile, err, runstore.ReplayFileName(2))
	}

	cases := []struct {
		name    string
		damage  []string // files of the run dir cut to half
		garbage string   // a file overwritten with garbage
		named   string   // the damaged file the warning or error names
		fails   bool
	}{
		{name: "truncated checkpoint", damage: []string{runstore.CheckpointFile}, named: runstore.CheckpointFile},
		{name: "truncated replay file", damage: []string{runstore.ReplayFileName(4)}, named: runstore.ReplayFileName(4)},
		{name: "checkpoint in a bad format", garbage: runstore.CheckpointFile, named: runstore.CheckpointFile},
		{name: "both checkpoints truncated", damage: []string{runstore.CheckpointFile, runstore.FallbackFile}, named: runstore.FallbackFile, fails: true},
		{name: "both replay files truncated", damage: []string{runstore.ReplayFileName(4), runstore.ReplayFileName(2)}, named: runstore.ReplayFileName(2), fails: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, partDir)
			for _, f := range tc.damage {
				truncate(t, dir, f)
			}
			if tc.garbage != "" {
				if err := os.WriteFile(filepath.Join(dir, tc.garbage), []byte("not a checkpoint at all"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := snapshot(t, dir)
			var log bytes.Buffer
			sum, err := run(dir, cfg, true, &log)
			if tc.fails {
				if err == nil {
					t.Fatal("resumed although both checkpoints are damaged")
				}
				msg := err.Error()
				t.Log(msg)
				if !strings.Contains(msg, filepath.Join(dir, tc.named)) || !strings.Contains(msg, "nothing was changed") {
					t.Errorf("error %q does not name %s or say that nothing changed", msg, tc.named)
				}
				if strings.Count(msg, "checkpoint:") > 0 || strings.Count(msg, "train:") > 0 || strings.Count(msg, "resume:") > 1 {
					t.Errorf("error %q repeats a prefix", msg)
				}
				sameFiles(t, tc.name, before, snapshot(t, dir))
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			warn := log.String()
			t.Log(warn)
			if !strings.Contains(warn, "level=WARN") || !strings.Contains(warn, "damaged="+filepath.Join(dir, tc.named)) || !strings.Contains(warn, runstore.FallbackFile) {
				t.Errorf("log lacks a warning naming the damaged %s and the fallback:\n%s", tc.named, warn)
			}
			sameRows(t, "resumed from the fallback", full.Rows, sum.Rows)
			onDisk, err := runstore.ReadMetrics(filepath.Join(dir, runstore.MetricsFile))
			if err != nil {
				t.Fatal(err)
			}
			sameRows(t, "metrics.csv resumed from the fallback", full.Rows, onDisk)
			// The run went on checkpointing (at 4, with no rotation of the damaged file, and at 6).
			if got, want := replayFiles(t, dir), []string{runstore.ReplayFileName(4), runstore.ReplayFileName(6)}; !slices.Equal(got, want) {
				t.Errorf("replay files %v, want %v", got, want)
			}
			for file, it := range map[string]int{runstore.CheckpointFile: 6, runstore.FallbackFile: 4} {
				if _, meta, err := runstore.ReadCheckpoint(filepath.Join(dir, file)); err != nil || meta.Iteration != it {
					t.Errorf("%s: iteration %d (%v), want %d", file, meta.Iteration, err, it)
				}
			}
		})
	}
}

// The long-episode loop keeps a fallback too: a damaged newest checkpoint or replay file resumes
// from it with a warning, the metrics cut back to its iteration and continued.
func TestStepsResumeFromFallback(t *testing.T) {
	cfg := config.Default()
	cfg.Env, cfg.Net, cfg.NumEnvs, cfg.StepsPerIter, cfg.SubEpisodes, cfg.MLPHidden = "CartPole-v1", config.NetMLP, 2, 10, 4, 8
	cfg.EvalEvery, cfg.Iters, cfg.CheckpointEvery = 0, 4, 2
	reg := registry.Default()
	for _, damaged := range []string{runstore.CheckpointFile, runstore.ReplayFileName(4)} {
		dir := t.TempDir()
		var log bytes.Buffer
		opts := Options{Dir: dir, Registry: reg, Engine: tensor.GonumEngine(), Logger: slog.New(slog.NewTextHandler(&log, nil))}
		if _, err := Run(context.Background(), cfg, opts); err != nil {
			t.Fatal(err)
		}
		truncate(t, dir, damaged)
		more := cfg
		more.Iters = 6
		opts.Resume = true
		sum, err := Run(context.Background(), more, opts)
		if err != nil {
			t.Fatalf("%s damaged: %v", damaged, err)
		}
		if !strings.Contains(log.String(), "damaged="+filepath.Join(dir, damaged)) || sum.Iterations != 6 {
			t.Errorf("%s damaged: %d iterations, log:\n%s", damaged, sum.Iterations, log.String())
		}
		rows, err := runstore.ReadMetrics(filepath.Join(dir, runstore.MetricsFile))
		if err != nil || len(rows) != 6 {
			t.Fatalf("%s damaged: %d metrics rows (%v), want 6", damaged, len(rows), err)
		}
		for i, r := range rows {
			if r.Iteration != i {
				t.Errorf("%s damaged: row %d is iteration %d", damaged, i, r.Iteration)
			}
		}
		if got, want := replayFiles(t, dir), []string{runstore.ReplayFileName(4), runstore.ReplayFileName(6)}; !slices.Equal(got, want) {
			t.Errorf("%s damaged: replay files %v, want %v", damaged, got, want)
		}
	}
}

// A resume whose total is not above the iterations done refuses with a DoneError and changes no
// file.
func TestResumeTotalAlreadyDone(t *testing.T) {
	cfg := smallCopyConfig(config.AlgoSparse, 0.05)
	cfg.BatchSize, cfg.Iters, cfg.StopAtThreshold = 8, 3, false
	dir := t.TempDir()
	if _, err := quickRun(t, dir, cfg, false); err != nil {
		t.Fatal(err)
	}
	for _, total := range []int{3, 2, 0} {
		before := snapshot(t, dir)
		c := cfg
		c.Iters = total
		_, err := quickRun(t, dir, c, true)
		var de *DoneError
		if !errors.Is(err, ErrNothingToDo) || !errors.As(err, &de) || de.Done != 3 || de.Total != total || de.Dir != dir {
			t.Errorf("total %d: error %v, want a DoneError of 3 done", total, err)
		}
		sameFiles(t, fmt.Sprint("total ", total), before, snapshot(t, dir))
	}
}
