package train

import (
	"context"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// --overlap collects the next iteration beside the training steps with the policy before them:
// the run differs from one without it (the behaviour policy is an iteration older), is a function
// of its seed all the same, and resumes exactly from a scheduled checkpoint (the iteration after
// it is collected when it starts). Run under -race, this also shows the collection and the
// training share nothing unguarded.
func TestOverlapIsDeterministicAndResumesExactly(t *testing.T) {
	reg := registry.Default()
	run := func(cfg config.Config, dir string, resume bool) []runstore.Row {
		t.Helper()
		sum, err := Run(context.Background(), cfg, Options{Dir: dir, Resume: resume, Registry: reg, Engine: tensor.GonumEngine()})
		if err != nil {
			t.Fatal(err)
		}
		return sum.Rows
	}
	// Pendulum's episodes are truncated at 200 steps: with 50 steps per iteration the copies are
	// between episodes at every checkpoint (every 4 iterations), which an exact resume needs.
	cfg := smallStepsConfig()
	cfg.Env, cfg.Grid, cfg.StepsPerIter, cfg.EvalEvery = "Pendulum-v1", 3, 50, 4
	cfg.Iters, cfg.CheckpointEvery, cfg.NormObs, cfg.TrainSteps = 8, 4, true, 2
	plain := run(cfg, t.TempDir(), false)
	cfg.Overlap = true
	a, b := run(cfg, t.TempDir(), false), run(cfg, t.TempDir(), false)
	sameRows(t, "overlap twice", a, b)
	same := true
	for i := range a {
		same = same && a[i].Loss == plain[i].Loss && a[i].MeanReward == plain[i].MeanReward
	}
	if same {
		t.Error("--overlap trained exactly as without it: the collection did not run ahead")
	}
	// Iteration 0 is collected when it starts, with the initial policy, as without --overlap.
	if a[0].Loss != plain[0].Loss {
		t.Errorf("iteration 0 differs from the run without --overlap: loss %v, without %v", a[0].Loss, plain[0].Loss)
	}
	half := cfg
	half.Iters = 4
	dir := t.TempDir()
	run(half, dir, false)
	sameRows(t, "overlap resumed", a, run(cfg, dir, true))
}
