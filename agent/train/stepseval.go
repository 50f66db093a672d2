package train

import (
	"context"
	"fmt"
	"math"
	"path/filepath"

	"github.com/sparsepcl/sparsepcl/agent/collect"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/model/mlp"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// readRunConfig reads the config.json of the run in dir.
func readRunConfig(dir string) (config.Config, error) {
	cfg, err := runstore.Dir(dir).Config()
	if err != nil {
		return cfg, fmt.Errorf("eval: %w", err)
	}
	return cfg, nil
}

// EvaluateSteps plays one greedy episode on each of n copies of a long-episode run's env with the
// checkpoint's policy (copy i from seed seed+i) and returns the undiscounted returns. watch, when
// not nil, sees the policy logits of every state acted in.
func EvaluateSteps(ctx context.Context, dir string, maker EnvMaker, eng *tensor.Engine, n int, seed int64, watch func(z []float32)) ([]float64, runstore.Meta, error) {
	cfg, err := readRunConfig(dir)
	if err != nil {
		return nil, runstore.Meta{}, err
	}
	r, err := newStepsRun(ctx, cfg, maker, eng, n)
	if err != nil {
		return nil, runstore.Meta{}, fmt.Errorf("eval: %w", err)
	}
	defer r.Close()
	meta, err := r.load(dir)
	if err != nil {
		return nil, runstore.Meta{}, fmt.Errorf("eval: %w", err)
	}
	returns, err := r.greedyReturns(ctx, seed, watch)
	if err != nil {
		return nil, meta, fmt.Errorf("eval: %w", err)
	}
	return returns, meta, nil
}

// RecordSteps plays one greedy episode of a long-episode run's checkpoint from seed and returns
// the env's actions (for a replay that renders it) with the return.
func RecordSteps(ctx context.Context, dir string, maker EnvMaker, eng *tensor.Engine, seed int64) (mlp.Recording, config.Config, error) {
	cfg, err := readRunConfig(dir)
	if err != nil {
		return mlp.Recording{}, cfg, err
	}
	r, err := newStepsRun(ctx, cfg, maker, eng, 1)
	if err != nil {
		return mlp.Recording{}, cfg, fmt.Errorf("record: %w", err)
	}
	defer r.Close()
	if _, err := r.load(dir); err != nil {
		return mlp.Recording{}, cfg, fmt.Errorf("record: %w", err)
	}
	ep, err := mlp.Record(ctx, r.evalEnv, r.enc, r.learner.Model, seed, evalStepCap)
	if err != nil {
		return ep, cfg, fmt.Errorf("record: %w", err)
	}
	return ep, cfg, nil
}

// load restores the parameters, optimiser and normaliser from dir's newest checkpoint (for
// evaluation; a resume can fall back, session.resume).
func (r *stepsRun) load(dir string) (runstore.Meta, error) {
	path := filepath.Join(dir, runstore.CheckpointFile)
	f, meta, err := runstore.ReadCheckpoint(path)
	if err != nil {
		return runstore.Meta{}, err
	}
	if meta.Steps == nil {
		return runstore.Meta{}, fmt.Errorf("checkpoint %s has no long-episode state: it was not written by an mlp run", path)
	}
	if err := f.Apply(checkpointParams(r.learner)); err != nil {
		return runstore.Meta{}, fmt.Errorf("checkpoint %s does not match the run's networks: %w", path, err)
	}
	if r.learner.Model.Norm != nil {
		r.learner.Model.Norm.Refresh()
	}
	return meta, nil
}

// greedyReturns plays one greedy episode on every evaluation copy, copy i from seed seed+i, for
// at most evalStepCap steps, and returns their undiscounted returns. watch, when not nil, sees
// the policy logits of every state acted in.
func (r *stepsRun) greedyReturns(ctx context.Context, seed int64, watch func(z []float32)) ([]float64, error) {
	r.evaler.Watch = watch
	defer func() { r.evaler.Watch = nil }()
	b, err := r.evaler.Episodes(ctx, nil, collect.Greedy, 0, seed)
	if err != nil {
		return nil, err
	}
	return b.Returns, nil
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
