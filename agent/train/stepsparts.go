package train

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/sparsepcl/sparsepcl/agent/collect"
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/model/mlp"
	"github.com/sparsepcl/sparsepcl/agent/replay"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs"
)

// evalStepCap bounds a greedy evaluation episode of a long-episode env that never ends by itself.
const evalStepCap = 100_000

// stepsRun is a long-episode run's parts: the envs (actions adapted), the learner, the sampler and
// the replay.
type stepsRun struct {
	parts[float32]
	enc mlp.Encoder
	net *mlp.Learner
	// actor is the policy the sampler acts with under --overlap: a snapshot of the learner's
	// network (nil: the sampler acts with the learner's own).
	actor *mlp.Model
}

// newStepsRun makes the envs of cfg (n training copies, m evaluation copies; m = 0: none) and the
// learner for them. Close closes the envs.
func newStepsRun(ctx context.Context, cfg config.Config, maker EnvMaker, eng *tensor.Engine, m int) (*stepsRun, error) {
	return newStepsRunChecked(ctx, cfg, maker, eng, m, nil)
}

// newStepsRunChecked is newStepsRun with check (when not nil) called with the observation size and
// the number of actions once the training envs are made and before anything else is: it refuses a
// run that needs too much memory.
func newStepsRunChecked(ctx context.Context, cfg config.Config, maker EnvMaker, eng *tensor.Engine, m int, check func(dim, numActions int) error) (_ *stepsRun, err error) {
	r := &stepsRun{}
	defer func() {
		if err != nil {
			err = errors.Join(err, r.Close())
		}
	}()
	if r.env, err = makeAdapted(ctx, cfg, maker, cfg.NumEnvs); err != nil {
		return nil, err
	}
	if r.enc, err = mlp.NewEncoder(r.env.ObservationSpace()); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Env, err)
	}
	K := int(r.env.ActionSpace().(envs.Discrete).N)
	if check != nil {
		if err := check(r.enc.Dim(), K); err != nil {
			return nil, err
		}
	}
	if eng == nil {
		if eng, err = tensor.NewEngine(); err != nil {
			return nil, err
		}
	}
	if r.net, err = mlp.NewLearner(cfg, r.enc.Dim(), K, eng); err != nil {
		return nil, err
	}
	r.learner, r.params, r.obsDim = r.net, checkpointParams(r.net), r.enc.Dim()
	var acting collect.Actor[float32] = r.net.Model
	if cfg.Overlap {
		if r.actor, err = mlp.New(cfg, r.enc.Dim(), K, eng); err != nil {
			return nil, err
		}
		if cfg.NormObs {
			r.actor.Norm = mlp.NewNormalizer(r.enc.Dim())
		}
		acting = r.actor
	}
	if r.sampler, err = collect.New(r.env, r.enc, acting, collect.Options{Seed: cfg.Seed}); err != nil {
		return nil, err
	}
	if err = explore(r.sampler, cfg, -1); err != nil {
		return nil, err
	}
	if r.buf, err = replay.New[float32](replay.Steps(cfg.ReplaySteps), replay.Recency{Weight: cfg.RecencyWeight}); err != nil {
		return nil, err
	}
	if m > 0 {
		if r.evalEnv, err = makeAdapted(ctx, cfg, maker, m); err != nil {
			return nil, fmt.Errorf("evaluation envs: %w", err)
		}
		if r.evaler, err = collect.New(r.evalEnv, r.enc, r.net.Model, collect.Options{MaxSteps: evalStepCap}); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// makeAdapted makes n copies of cfg.Env and adapts their action space (--grid, Tuple).
func makeAdapted(ctx context.Context, cfg config.Config, maker EnvMaker, n int) (envs.VecEnv, error) {
	env, err := maker.MakeVec(ctx, cfg, n)
	if err != nil {
		return nil, err
	}
	adapted, err := mlp.AdaptActions(env, cfg.Grid)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("%s: %w", cfg.Env, err), env.Close())
	}
	return adapted, nil
}

// Close closes the envs.
func (r *stepsRun) Close() error { return closeEnvs(r.env, r.evalEnv) }

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
func EvaluateSteps(ctx context.Context, dir string, maker EnvMaker, eng *tensor.Engine, n int, seed int64, watch func(z []float32)) (_ []float64, _ runstore.Meta, err error) {
	cfg, err := readRunConfig(dir)
	if err != nil {
		return nil, runstore.Meta{}, err
	}
	r, err := newStepsRun(ctx, cfg, maker, eng, n)
	if err != nil {
		return nil, runstore.Meta{}, fmt.Errorf("eval: %w", err)
	}
	defer closeKeepingErr(&err, r)
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
func RecordSteps(ctx context.Context, dir string, maker EnvMaker, eng *tensor.Engine, seed int64) (_ mlp.Recording, _ config.Config, err error) {
	cfg, err := readRunConfig(dir)
	if err != nil {
		return mlp.Recording{}, cfg, err
	}
	r, err := newStepsRun(ctx, cfg, maker, eng, 1)
	if err != nil {
		return mlp.Recording{}, cfg, fmt.Errorf("record: %w", err)
	}
	defer closeKeepingErr(&err, r)
	if _, err := r.load(dir); err != nil {
		return mlp.Recording{}, cfg, fmt.Errorf("record: %w", err)
	}
	ep, err := mlp.Record(ctx, r.evalEnv, r.enc, r.net.Model, seed, evalStepCap)
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
	if err := f.Apply(r.params); err != nil {
		return runstore.Meta{}, fmt.Errorf("checkpoint %s does not match the run's networks: %w", path, err)
	}
	if r.net.Model.Norm != nil {
		r.net.Model.Norm.Refresh()
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
