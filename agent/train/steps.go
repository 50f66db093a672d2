package train

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/collect"
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/memory"
	"github.com/sparsepcl/sparsepcl/agent/model/mlp"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
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
	cfg     config.Config
	env     envs.VecEnv
	evalEnv envs.VecEnv // nil without greedy evaluation
	enc     mlp.Encoder
	learner *mlp.Learner
	// actor is the policy the sampler acts with under --overlap: a snapshot of the learner's
	// network (nil: the sampler acts with the learner's own).
	actor   *mlp.Model
	sampler *collect.Collector[float32]
	evaler  *collect.Collector[float32] // nil without greedy evaluation
	replay  *replay.Buffer[float32]
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
	r := &stepsRun{cfg: cfg}
	defer func() {
		if err != nil {
			r.Close()
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
	if r.learner, err = mlp.NewLearner(cfg, r.enc.Dim(), K, eng); err != nil {
		return nil, err
	}
	var acting collect.Actor[float32] = r.learner.Model
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
	if r.replay, err = replay.New[float32](replay.Steps(cfg.ReplaySteps), replay.Recency{Weight: cfg.RecencyWeight}); err != nil {
		return nil, err
	}
	if m > 0 {
		if r.evalEnv, err = makeAdapted(ctx, cfg, maker, m); err != nil {
			return nil, fmt.Errorf("evaluation envs: %w", err)
		}
		if r.evaler, err = collect.New(r.evalEnv, r.enc, r.learner.Model, collect.Options{MaxSteps: evalStepCap}); err != nil {
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
		env.Close()
		return nil, fmt.Errorf("%s: %w", cfg.Env, err)
	}
	return adapted, nil
}

// Close closes the envs.
func (r *stepsRun) Close() { closeEnvs(r.env, r.evalEnv) }

// steps is the MLP family's member of a run over long episodes: each iteration takes
// cfg.StepsPerIter steps per copy from where the copies stand, adds the pieces to the step replay,
// optionally takes a gradient step on them, and takes cfg.GradientSteps() steps on cfg.SubEpisodes
// sub-episodes sampled by recency. The metrics' mean_reward is the mean return of the episodes
// completed in the iteration (the previous row's value when none completed); support_size and
// max_prob are means over the last 1000 on-policy steps. The greedy evaluation plays the policy
// that sampled the iteration, before the normaliser's update and the training step, like every
// other column of the row.
type steps struct{ learner *mlp.Learner }

// newSteps makes the envs and the learner of cfg, refusing a run estimated to need too much
// memory before the learner is allocated. close closes the envs.
func newSteps(ctx context.Context, cfg config.Config, opts Options) (*session[float32], error) {
	m := 0
	if cfg.EvalEvery > 0 {
		m = cfg.EvalEpisodes
	}
	var est memory.Estimate
	check := func(dim, numActions int) error {
		est = memory.EstimateSteps(cfg, dim, numActions)
		return memory.Check(opts.MaxMemory, memory.SubjectOf(cfg, numActions), est)
	}
	r, err := newStepsRunChecked(ctx, cfg, opts.envMaker(), opts.Engine, m, check)
	if err != nil {
		return nil, err
	}
	log := opts.logger()
	if cfg.Overlap && runtime.GOMAXPROCS(0) < 2 {
		// With one P the collecting goroutine runs only when the training goroutine is
		// preempted, so each env step's reply waits for it: measured slower than no overlap.
		log.Warn("--overlap with GOMAXPROCS=1: the collection waits on the training steps; give the process two (GOMAXPROCS=2)")
	}
	K, dim := r.learner.Model.NumActions(), r.enc.Dim()
	s := &session[float32]{cfg: cfg, dir: opts.Dir, log: log, fam: steps{r.learner}, parts: parts[float32]{
		learner: r.learner, params: checkpointParams(r.learner), env: r.env, evalEnv: r.evalEnv, sampler: r.sampler,
		evaler: r.evaler, buf: r.replay, obsDim: dim}}
	if r.actor != nil {
		s.snapshot = func() error { return snapshotActor(r.learner, r.actor) }
	}
	s.prof = profile{traits: traits{long: true}, est: est, actions: K, onPolicy: cfg.OnPolicyStep, replayBatch: cfg.SubEpisodes,
		fields: []any{"env", cfg.Env, "net", cfg.Net, "obs_dim", dim, "actions", K, "algo", cfg.Algo,
			"form", cfg.Form, "alpha", cfg.Alpha, "copies", cfg.NumEnvs, "steps_per_iter", cfg.StepsPerIter,
			"train_steps", cfg.GradientSteps(), "rows_per_env_step", cfg.RowsPerEnvStep(), "target_lag", cfg.TargetLag, "iters", cfg.Iters},
		moreFields: []any{"replay_bytes_per_step", memory.ReplayBytesPerStep(dim)}}
	return s, nil
}

// begin refreshes the normaliser a checkpoint restored.
func (m steps) begin(_ context.Context, resumed bool) error {
	if resumed && m.learner.Model.Norm != nil {
		m.learner.Model.Norm.Refresh()
	}
	return nil
}

func (steps) sampled(int, *collect.Batch[float32], *runstore.Row, time.Duration) error { return nil }

// learn updates the normaliser with the iteration's observations.
func (m steps) learn(b *collect.Batch[float32]) {
	if m.learner.Model.Norm != nil {
		m.learner.Model.Norm.Update(b.Observations)
	}
}

func (m steps) step(_ int, _ StepKind, batch []*mlp.Segment) (pcl.StepInfo, error) {
	return m.learner.TrainStep(batch)
}

// trained fills the row's diagnostics from the last replay step.
func (m steps) trained(_ int, done learned[float32], row *runstore.Row) error {
	d := mlp.ValueDiagnostics(m.learner, done.lastBatch)
	info := done.last
	row.Diagnostics = runstore.Diagnostics{ValueMean: d.ValueMean, ReturnDiscounted: d.ReturnDiscounted, RegTerm: d.RegTerm,
		ClipScale: info.ClipScale, GradNormPolicy: info.GradNormPolicy, GradNormValue: info.GradNormValue}
	return nil
}

// snapshotActor copies the learner's parameters, normaliser statistics and weight into the actor
// (--overlap).
func snapshotActor(l *mlp.Learner, to *mlp.Model) error {
	from := l.Model
	fp, tp := from.Params(), to.Params()
	if from.Norm != nil {
		fp, tp = append(fp[:len(fp):len(fp)], from.Norm.Stats), append(tp[:len(tp):len(tp)], to.Norm.Stats)
	}
	for i, p := range fp {
		copy(tp[i].Value.Data, p.Value.Data)
	}
	if err := to.Layout().SetAlpha(l.Alpha()); err != nil {
		return fmt.Errorf("overlap: %w", err)
	}
	return nil
}
