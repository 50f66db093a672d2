package train

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/collect"
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/episode"
	"github.com/sparsepcl/sparsepcl/agent/memory"
	"github.com/sparsepcl/sparsepcl/agent/model/lstm"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/replay"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
)

// episodes is the LSTM family's member of a run over the algorithmic tasks: each iteration
// samples a batch of whole fresh episodes, takes an on-policy step on them, adds them to the
// replay buffer and takes GradientSteps replay steps (one, the paper's, by default); the greedy
// evaluation plays the trained policy at the training curriculum's length. An Observer watches
// it from inside.
type episodes struct {
	learner *lstm.Learner
	cfg     config.Config
	spec    lstm.Spec
	buf     *replay.Buffer[int32]
	obs     Observer // Options.Observer, or NopObserver
	s       *session[int32]
}

// newEpisodes makes the envs (refusing a run estimated to need too much memory before the
// learner is allocated), the learner, the samplers and the replay buffer of cfg. close closes
// the envs.
func newEpisodes(ctx context.Context, cfg config.Config, opts Options) (_ *session[int32], err error) {
	s := &session[int32]{cfg: cfg, dir: opts.Dir, log: opts.logger()}
	m := &episodes{cfg: cfg, obs: opts.Observer, s: s}
	if m.obs == nil {
		m.obs = NopObserver{}
	}
	s.fam = m
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Close())
		}
	}()
	maker := opts.envMaker()
	if s.env, err = maker.MakeVec(ctx, cfg, cfg.BatchSize); err != nil {
		return nil, err
	}
	if m.spec, err = lstm.SpecOf(s.env); err != nil {
		return nil, err
	}
	est := memory.EstimateEpisodes(cfg, m.spec)
	if err := memory.Check(opts.MaxMemory, memory.SubjectOf(cfg, m.spec.NumActions()), est); err != nil {
		return nil, err
	}
	if m.learner, err = lstm.NewLearner(cfg, m.spec, opts.Engine); err != nil {
		return nil, err
	}
	if s.sampler, err = m.learner.Model.NewCollector(s.env, cfg.MaxSteps); err != nil {
		return nil, err
	}
	if err = explore(s.sampler, cfg, -1); err != nil {
		return nil, err
	}
	if cfg.EvalEvery > 0 {
		if s.evalEnv, err = maker.MakeVec(ctx, cfg, cfg.EvalEpisodes); err != nil {
			return nil, fmt.Errorf("evaluation env: %w", err)
		}
		if s.evaler, err = m.learner.Model.NewCollector(s.evalEnv, cfg.MaxSteps); err != nil {
			return nil, err
		}
	}
	if cfg.Replay {
		if m.buf, err = replay.NewEpisodes(cfg.ReplayCapacity, cfg.ReplayAlpha, cfg.ReplayUniform, string(cfg.ReplayEviction)); err != nil {
			return nil, err
		}
	}
	s.learner, s.params, s.buf, s.obsDim = m.learner, checkpointParams(m.learner), m.buf, episode.TokenDim
	// The released code evaluated the trained policy.
	s.prof = profile{evalAfter: true, est: est, actions: m.spec.NumActions(), onPolicy: true,
		replayBatch: cfg.EffectiveReplayBatch(),
		fields: []any{"env", cfg.Env, "base", cfg.Base, "actions", m.spec.NumActions(), "algo", cfg.Algo, "form", cfg.Form,
			"alpha", cfg.Alpha, "batch", cfg.BatchSize, "iters", cfg.Iters},
		moreFields: []any{"blas", opts.Engine.Backend()}}
	return s, nil
}

// begin starts the observer on the learner and replay buffer the run starts with.
func (m *episodes) begin(ctx context.Context, _ bool) error {
	watched := Watched{Config: m.cfg, Spec: m.spec, Learner: m.learner, Replay: m.buf}
	if err := m.obs.Start(ctx, watched); err != nil {
		return fmt.Errorf("observer: %w", err)
	}
	return nil
}

func (m *episodes) sampled(it int, b *collect.Batch[int32], _ *runstore.Row, took time.Duration) error {
	if err := m.obs.Sampled(Sample{Iteration: it, Batch: *b, Env: m.s.env, Took: took}); err != nil {
		return fmt.Errorf("observer: %w", err)
	}
	return nil
}

func (m *episodes) learn(*collect.Batch[int32]) {}

// step takes one training step on batch, shown to the observer before and after.
func (m *episodes) step(it int, kind StepKind, batch []*episode.Episode) (pcl.StepInfo, error) {
	s := Step{Iteration: it, Kind: kind, Batch: batch}
	if err := m.obs.BeforeStep(s); err != nil {
		return pcl.StepInfo{}, fmt.Errorf("observer: %w", err)
	}
	start := time.Now()
	info, err := m.learner.TrainStep(s.Batch)
	if err != nil {
		return info, err
	}
	if err := m.obs.AfterStep(s, info, time.Since(start)); err != nil {
		return info, fmt.Errorf("observer: %w", err)
	}
	return info, nil
}

func (m *episodes) trained(it int, _ learned[int32], _ *runstore.Row) error { return m.obs.Trained(it) }
