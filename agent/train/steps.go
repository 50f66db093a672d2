package train

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"runtime"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/collect"
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/memory"
	"github.com/sparsepcl/sparsepcl/agent/model/mlp"
	"github.com/sparsepcl/sparsepcl/agent/nn/checkpoint"
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

// load restores the parameters, optimiser, normaliser (and, with withReplay, the replay) from
// dir's newest checkpoint (for evaluation; a resume uses restore, which can fall back).
func (r *stepsRun) load(dir string, withReplay bool) (runstore.Meta, error) {
	path := filepath.Join(dir, runstore.CheckpointFile)
	f, meta, err := runstore.ReadCheckpoint(path)
	if err != nil {
		return runstore.Meta{}, err
	}
	if err := r.restore(path, f, meta, withReplay); err != nil {
		return runstore.Meta{}, err
	}
	return meta, nil
}

// restore puts the checkpoint at path (read as f and meta) into the run: parameters, optimiser,
// normaliser and, with withReplay, the replay and the statistics window.
func (r *stepsRun) restore(path string, f *checkpoint.File, meta runstore.Meta, withReplay bool) error {
	if meta.Steps == nil {
		return fmt.Errorf("checkpoint %s has no long-episode state: it was not written by an mlp run", path)
	}
	if err := f.Apply(checkpointParams(r.learner)); err != nil {
		return fmt.Errorf("checkpoint %s does not match the run's networks: %w", path, err)
	}
	if r.learner.Model.Norm != nil {
		r.learner.Model.Norm.Refresh()
	}
	if !withReplay {
		return nil
	}
	rp, err := runstore.ReplayPath(path, meta)
	if err != nil {
		return err
	}
	if err := r.replay.LoadFile(rp, r.enc.Dim()); err != nil {
		return &runstore.FileError{Path: rp, Err: err}
	}
	if err := r.sampler.SetWindowState(meta.Steps.Window); err != nil {
		return fmt.Errorf("checkpoint %s: statistics window: %w", path, err)
	}
	return nil
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

// steps is the regime of long-episode envs: each iteration takes cfg.StepsPerIter steps per copy
// from where the copies stand, adds the pieces to the step replay, optionally takes a gradient
// step on them, and takes one gradient step on cfg.SubEpisodes sub-episodes sampled by recency.
// The metrics' mean_reward is the mean return of the episodes completed in the iteration (the
// previous row's value when none completed); support_size and max_prob are means over the last
// 1000 on-policy steps. The greedy evaluation plays the policy that sampled the iteration.
type steps struct {
	*stepsRun
	dir string
	log *slog.Logger
	est memory.Estimate
	st  *runstore.StepsState   // the time split and last return, saved in the checkpoint
	col collect.Batch[float32] // the iteration's steps

	// under --overlap: the context of the iteration's sampling, which the next iteration's
	// collection (pending, running beside the training steps) runs in
	ctx     context.Context
	pending *prefetch
}

// newSteps makes the envs and the learner of cfg, refusing a run estimated to need too much
// memory before the learner is allocated. Close closes the envs.
func newSteps(ctx context.Context, cfg config.Config, opts Options) (*steps, error) {
	m := 0
	if cfg.EvalEvery > 0 {
		m = cfg.EvalEpisodes
	}
	r := &steps{dir: opts.Dir, log: opts.logger()}
	check := func(dim, numActions int) error {
		r.est = memory.EstimateSteps(cfg, dim, numActions)
		return memory.Check(opts.MaxMemory, memory.SubjectOf(cfg, numActions), r.est)
	}
	var err error
	if r.stepsRun, err = newStepsRunChecked(ctx, cfg, opts.envMaker(), opts.Engine, m, check); err != nil {
		return nil, err
	}
	if cfg.Overlap && runtime.GOMAXPROCS(0) < 2 {
		// With one P the collecting goroutine runs only when the training goroutine is
		// preempted, so each env step's reply waits for it: measured slower than no overlap.
		r.log.Warn("--overlap with GOMAXPROCS=1: the collection waits on the training steps; give the process two (GOMAXPROCS=2)")
	}
	return r, nil
}

func (r *steps) Alpha() float64               { return r.learner.Alpha() }
func (r *steps) SetAlpha(alpha float64) error { return r.learner.SetAlpha(alpha) }

func (r *steps) close() {
	r.discardPrefetch()
	r.Close()
}

// start: a long-episode checkpoint takes everything from the run as it stands when it is saved.
// The greedy evaluation plays the policy that sampled this iteration, before the normaliser's
// update and the training step, like every other column of the row.
func (r *steps) start(_ context.Context, resume bool) (runstore.Meta, *runstore.Checkpoints, profile, error) {
	meta := runstore.Meta{Config: r.cfg, Steps: &runstore.StepsState{LastMeanReturn: runstore.JSONFloat(math.NaN())}}
	cp := runstore.Dir(r.dir).NewCheckpoints()
	if resume {
		restore := func(path string, f *checkpoint.File, meta runstore.Meta) error { return r.restore(path, f, meta, true) }
		var err error
		if meta, cp, err = runstore.Dir(r.dir).ResumeCheckpoints(r.log, restore); err != nil {
			return runstore.Meta{}, nil, profile{}, err
		}
		meta.Config = r.cfg
		if meta.Steps.MidEpisode > 0 {
			r.log.Warn("resuming inexactly: copies that were mid-episode at the checkpoint start new episodes", "copies", meta.Steps.MidEpisode)
		}
	}
	r.st = meta.Steps
	cfg := r.cfg
	return meta, cp, profile{traits: traits{envSteps: true}, est: r.est, actions: r.learner.Model.NumActions(),
		fields: []any{"env", cfg.Env, "net", cfg.Net, "obs_dim", r.enc.Dim(), "actions", r.learner.Model.NumActions(), "algo", cfg.Algo,
			"form", cfg.Form, "alpha", cfg.Alpha, "copies", cfg.NumEnvs, "steps_per_iter", cfg.StepsPerIter,
			"train_steps", cfg.GradientSteps(), "rows_per_env_step", cfg.RowsPerEnvStep(), "target_lag", cfg.TargetLag, "iters", cfg.Iters},
		moreFields: []any{"replay_bytes_per_step", memory.ReplayBytesPerStep(r.enc.Dim())}}, nil
}

func (r *steps) sample(ctx context.Context, it int, row *runstore.Row) (int, error) {
	r.ctx = ctx
	col, err := r.takePrefetch(it)
	if col == nil {
		col, err = r.collect(ctx, it)
	}
	r.st.EnvSeconds += col.EnvSeconds
	r.st.PolicySeconds += col.PolicySeconds
	if err != nil {
		return 0, err
	}
	collect.FillReturnsToGo(col.Ended, r.cfg.Gamma)
	r.col = *col
	row.MaxProb, row.Support = r.sampler.Window()
	if len(col.Returns) > 0 {
		r.st.LastMeanReturn = runstore.JSONFloat(mean(col.Returns))
		r.st.Episodes += int64(len(col.Returns))
	}
	row.MeanReward = float64(r.st.LastMeanReturn)
	return col.EnvSteps, nil
}

// train updates the normaliser, starts the next iteration's collection under --overlap, and
// takes the optional on-policy step and the replay steps (learning, priorities by recency); the
// row's loss is the on-policy step's when there is one, its gradient norm the replay steps'.
func (r *steps) train(it int, row *runstore.Row) (string, error) {
	t0 := time.Now()
	if r.learner.Model.Norm != nil {
		r.learner.Model.Norm.Update(r.col.Observations)
	}
	if err := r.startPrefetch(it + 1); err != nil {
		return "overlap", err
	}
	step := func(_ StepKind, batch []*mlp.Segment) (pcl.StepInfo, error) { return r.learner.TrainStep(batch) }
	l := learning[float32]{fresh: r.col.Trajectories, onPolicy: r.cfg.OnPolicyStep, buf: r.replay, k: r.cfg.GradientSteps(),
		batch: r.cfg.SubEpisodes, step: step}
	done, stage, err := l.run(r.cfg, iterRNG(r.cfg.Seed, it, 3))
	if err != nil {
		return stage, err
	}
	row.Loss, row.ReplayLoss, row.GradNorm = done.onPolicy.Loss, done.replayLoss, done.replayGradNorm
	if !r.cfg.OnPolicyStep {
		row.Loss = done.replayLoss
	}
	row.Diagnostics = stepDiagnostics(done.last, mlp.ValueDiagnostics(r.learner, done.lastBatch))
	r.st.TrainSeconds += time.Since(t0).Seconds()
	return "", nil
}

func (r *steps) evaluate(ctx context.Context, it int) (float64, error) {
	t1 := time.Now()
	returns, err := r.greedyReturns(ctx, iterSeed(r.cfg.Seed, it, 5), nil)
	if err != nil {
		return 0, err
	}
	r.st.EvalSeconds += time.Since(t1).Seconds()
	return mean(returns), nil
}

func (r *steps) save(cp *runstore.Checkpoints, meta runstore.Meta) error {
	if cp.Last() == meta.Iteration {
		return nil
	}
	lost := r.discardPrefetch()
	meta.Steps.Window = r.sampler.WindowState()
	meta.Steps.MidEpisode = r.sampler.MidEpisode()
	if lost {
		// A stop between scheduled checkpoints: the next iteration's steps were taken and are
		// lost, so every copy starts a new episode on resume (which says so).
		meta.Steps.MidEpisode = r.cfg.NumEnvs
	}
	saveReplay := func(path string) error { return r.replay.SaveFile(path) }
	return cp.Write(meta, checkpointParams(r.learner), saveReplay)
}

// TimeSplit is the line that says where a long-episode run's time went over the whole run (env
// stepping, sampling forwards, training, greedy evaluation) and its env steps per second of wall
// time; ok is false for a run that keeps no time split (Summary.Steps nil) or has no rows.
func (s Summary) TimeSplit() (line string, ok bool) {
	st := s.Steps
	if st == nil || len(s.Rows) == 0 {
		return "", false
	}
	last := s.Rows[len(s.Rows)-1]
	total := st.EnvSeconds + st.PolicySeconds + st.TrainSeconds + st.EvalSeconds
	pct := func(x float64) float64 { return 100 * x / max(total, 1e-9) }
	return fmt.Sprintf("time over the whole run: %.0f env steps/s of wall time; env stepping (transport included) %.1f s (%.0f%%), sampling forwards %.1f s (%.0f%%), training steps %.1f s (%.0f%%), greedy evaluation %.1f s (%.0f%%)",
		float64(s.EnvSteps)/max(last.WallSeconds, 1e-9), st.EnvSeconds, pct(st.EnvSeconds), st.PolicySeconds, pct(st.PolicySeconds),
		st.TrainSeconds, pct(st.TrainSeconds), st.EvalSeconds, pct(st.EvalSeconds)), true
}

// stepDiagnostics is the metrics row's form of a replay step's diagnostics.
func stepDiagnostics(info pcl.StepInfo, d mlp.Diagnostics) runstore.Diagnostics {
	return runstore.Diagnostics{ValueMean: d.ValueMean, ReturnDiscounted: d.ReturnDiscounted, RegTerm: d.RegTerm, ClipScale: info.ClipScale,
		GradNormPolicy: info.GradNormPolicy, GradNormValue: info.GradNormValue}
}
