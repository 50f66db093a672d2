package evaluation

import (
	"io"
	"log/slog"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/envs/registry"
	"github.com/sparsepcl/sparsepcl/internal/lab/sweep"
)

// tiny is a config that trains in a fraction of a second.
func tiny() config.Config {
	c := config.Default()
	c.BatchSize, c.Hidden, c.Iters, c.EvalEvery, c.EvalEpisodes, c.CheckpointEvery, c.ReplayCapacity = 8, 8, 6, 2, 4, 2, 50
	return c
}

func planTiny(t *testing.T, dir string, cells ...sweep.Cell) sweep.Manifest {
	t.Helper()
	if len(cells) == 0 {
		cells = []sweep.Cell{{Env: "Copy-v0", Base: 2, Algo: "sparse", Alpha: 0.05}, {Env: "Copy-v0", Base: 2, Algo: "soft", Alpha: 0.02}}
	}
	m, err := sweep.Plan(sweep.Spec{Base: tiny(), Cells: cells, Seeds: 1, FirstSeed: 1, TaskThresholds: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := sweep.Write(dir, m); err != nil {
		t.Fatal(err)
	}
	return m
}

func quiet() sweep.RunOptions {
	return sweep.RunOptions{Registry: registry.Default(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
}
