package train

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/collect"
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/episode"
	"github.com/sparsepcl/sparsepcl/agent/memory"
	"github.com/sparsepcl/sparsepcl/agent/model/lstm"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/replay"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
)

// episodes is the regime of the algorithmic tasks: each iteration samples a batch of whole fresh
// episodes, takes an on-policy step on them, adds them to the replay buffer and takes
// GradientSteps replay steps (one, the paper's, by default); the greedy evaluation plays the
// trained policy at the training curriculum's length.
type episodes struct {
	*lstm.Learner
	cfg     config.Config
	dir     string
	log     *slog.Logger
	est     memory.Estimate
	eng     *tensor.Engine
	spec    lstm.Spec
	env     envs.VecEnv
	sampler *collect.Collector[int32]
	evalEnv envs.VecEnv // nil without greedy evaluation
	evaler  *collect.Collector[int32]
	buf     *replay.Buffer[int32] // nil without replay
	sv      *saver
	obs     Observer             // Options.Observer, or NopObserver
	res     collect.Batch[int32] // the iteration's episodes
	surplus []float64            // their surpluses over V (replay priority "advantage")
}

// newEpisodes makes the envs (refusing a run estimated to need too much memory before the
// learner is allocated), the learner, the samplers and the replay buffer of cfg. close closes
// the envs.
func newEpisodes(ctx context.Context, cfg config.Config, opts Options) (_ *episodes, err error) {
	r := &episodes{cfg: cfg, dir: opts.Dir, log: opts.logger(), eng: opts.Engine, obs: opts.Observer}
	if r.obs == nil {
		r.obs = NopObserver{}
	}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	maker := opts.envMaker()
	if r.env, err = maker.MakeVec(ctx, cfg, cfg.BatchSize); err != nil {
		return nil, err
	}
	if r.spec, err = lstm.SpecOf(r.env); err != nil {
		return nil, err
	}
	r.est = memory.EstimateEpisodes(cfg, r.spec)
	if err := memory.Check(opts.MaxMemory, memory.SubjectOf(cfg, r.spec.NumActions()), r.est); err != nil {
		return nil, err
	}
	if r.Learner, err = lstm.NewLearner(cfg, r.spec, opts.Engine); err != nil {
		return nil, err
	}
	if r.sampler, err = r.Model.NewCollector(r.env, cfg.MaxSteps); err != nil {
		return nil, err
	}
	if err = explore(r.sampler, cfg, -1); err != nil {
		return nil, err
	}
	if cfg.EvalEvery > 0 {
		if r.evalEnv, err = maker.MakeVec(ctx, cfg, cfg.EvalEpisodes); err != nil {
			return nil, fmt.Errorf("evaluation env: %w", err)
		}
		if r.evaler, err = r.Model.NewCollector(r.evalEnv, cfg.MaxSteps); err != nil {
			return nil, err
		}
	}
	if cfg.Replay {
		if r.buf, err = replay.NewEpisodes(cfg.ReplayCapacity, cfg.ReplayAlpha, cfg.ReplayUniform, string(cfg.ReplayEviction)); err != nil {
			return nil, err
		}
	}
	r.sv = &saver{learner: r.Learner, env: r.env, buf: r.buf}
	return r, nil
}

func (r *episodes) close() { closeEnvs(r.env, r.evalEnv) }

// closeEnvs closes the envs of a regime that were made.
func closeEnvs(es ...envs.VecEnv) {
	for _, e := range es {
		if e != nil {
			e.Close()
		}
	}
}

// start also marks the curriculum a checkpoint before the first iteration saves, and starts the
// observer on the learner and replay buffer the run starts with.
// The released code evaluated the trained policy.
func (r *episodes) start(ctx context.Context, resume bool) (runstore.Meta, *runstore.Checkpoints, profile, error) {
	meta, cp := runstore.Meta{Config: r.cfg}, runstore.Dir(r.dir).NewCheckpoints()
	if resume {
		var err error
		if meta, cp, err = resumeEpisodes(r.dir, r.cfg, r.Learner, r.env, r.buf, r.log); err != nil {
			return meta, cp, profile{}, err
		}
	}
	r.sv.mark()
	watched := Watched{Config: r.cfg, Spec: r.spec, Learner: r.Learner, Replay: r.buf}
	if err := r.obs.Start(ctx, watched); err != nil {
		return runstore.Meta{}, nil, profile{}, fmt.Errorf("observer: %w", err)
	}
	cfg := r.cfg
	return meta, cp, profile{traits: traits{evalAfter: true}, est: r.est, actions: r.spec.NumActions(),
		curriculum: algorithmic.CurriculumOf(r.env),
		fields: []any{"env", cfg.Env, "base", cfg.Base, "actions", r.spec.NumActions(), "algo", cfg.Algo, "form", cfg.Form,
			"alpha", cfg.Alpha, "batch", cfg.BatchSize, "iters", cfg.Iters},
		moreFields: []any{"blas", r.eng.Backend()}}, nil
}

func (r *episodes) sample(ctx context.Context, it int, row *runstore.Row) (int, error) {
	start := time.Now()
	if err := explore(r.sampler, r.cfg, it); err != nil {
		return 0, err
	}
	res, err := r.sampler.Episodes(ctx, iterRNG(r.cfg.Seed, it, 1), collect.Sample, it, iterSeed(r.cfg.Seed, it, 2))
	if err != nil {
		return 0, err
	}
	took := time.Since(start)
	r.res = res
	row.MeanReward, row.Support, row.MaxProb = res.MeanReturn(), res.Stats.MeanSupport(), res.Stats.MeanMaxProb()
	row.Curriculum = algorithmic.CurriculumOf(r.env)
	if err := r.obs.Sampled(Sample{Iteration: it, Batch: res, Env: r.env, Took: took}); err != nil {
		return 0, fmt.Errorf("observer: %w", err)
	}
	return res.EnvSteps, nil
}

// train takes the on-policy step on the fresh episodes, then, with replay, stores them and takes
// GradientSteps steps on batches drawn afresh from the replay (learning).
func (r *episodes) train(it int, row *runstore.Row) (string, error) {
	step := func(kind StepKind, batch []*episode.Episode) (pcl.StepInfo, error) {
		return r.step(Step{Iteration: it, Kind: kind, Batch: batch})
	}
	l := learning[int32]{fresh: r.res.Trajectories, onPolicy: true, buf: r.buf, k: r.cfg.GradientSteps(),
		batch: r.cfg.EffectiveReplayBatch(), priorities: r.priorities, step: step}
	done, stage, err := l.run(r.cfg, iterRNG(r.cfg.Seed, it, 3))
	if err != nil {
		return stage, err
	}
	row.Loss, row.GradNorm, row.ReplayLoss = done.onPolicy.Loss, done.onPolicy.GradNorm, done.replayLoss
	r.sv.mark()
	if err := r.obs.Trained(it); err != nil {
		return "observer", err
	}
	return "", nil
}

// priorities are the fresh episodes' replay priorities: their return, their surplus over V as the
// on-policy step's values judged them, or (nil) their iteration.
func (r *episodes) priorities() []float64 {
	switch r.cfg.ReplayPriority {
	case config.PriorityAdvantage:
		r.surplus = r.Objective().Surpluses(r.surplus)
		return r.surplus
	case config.PriorityRecency:
		return nil
	}
	prio := make([]float64, len(r.res.Trajectories))
	for i, e := range r.res.Trajectories {
		prio[i] = e.TotalReward()
	}
	return prio
}

// step takes one training step on s.Batch, shown to the observer before and after.
func (r *episodes) step(s Step) (pcl.StepInfo, error) {
	if err := r.obs.BeforeStep(s); err != nil {
		return pcl.StepInfo{}, fmt.Errorf("observer: %w", err)
	}
	start := time.Now()
	info, err := r.TrainStep(s.Batch)
	if err != nil {
		return info, err
	}
	if err := r.obs.AfterStep(s, info, time.Since(start)); err != nil {
		return info, fmt.Errorf("observer: %w", err)
	}
	return info, nil
}

func (r *episodes) evaluate(ctx context.Context, it int) (float64, error) {
	if err := algorithmic.SyncCurriculum(r.evalEnv, r.env); err != nil {
		return 0, err
	}
	ev, err := r.evaler.Episodes(ctx, iterRNG(r.cfg.Seed, it, 4), collect.Greedy, it, iterSeed(r.cfg.Seed, it, 5))
	if err != nil {
		return 0, err
	}
	return ev.MeanReturn(), nil
}

func (r *episodes) save(cp *runstore.Checkpoints, meta runstore.Meta) error {
	r.sv.cp = cp
	return r.sv.save(meta)
}
