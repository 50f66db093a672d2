package train

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/collect"
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/episode"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/nn/checkpoint"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/replay"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
)

// session is the one regime of every run, of either family: each iteration it collects whole
// episodes or, for long episodes (profile.long), cfg.StepsPerIter steps per copy from where the
// copies stand; then the learning (learn.go) and, on schedule, a greedy evaluation. Its random
// draws: stream 1 samples actions, 2 seeds the episodes' resets, 3 the learning, 4 and 5 the same
// for the evaluation. What the family adds is its member; what it builds is its parts.
type session[O episode.Observation] struct {
	parts[O]
	fam member[O]
	cfg config.Config
	dir string
	log *slog.Logger

	fresh    collect.Batch[O]                // the iteration's experience
	trainCur *algorithmic.VecCurriculumState // the curriculum after the last completed iteration
	surplus  []float64                       // the fresh episodes' surpluses over V (priorities)
	st       *runstore.StepsState            // long episodes: time split and last return (else nil)

	// under --overlap: the context of the iteration's sampling, which the next iteration's
	// collection (pending, running beside the training steps) runs in
	ctx     context.Context
	pending *prefetch[O]
}

// parts are what a family builds for a run: its network (the learner and what its checkpoint
// holds), its collectors (its actor and encoder over the envs) and the replay.
type parts[O episode.Observation] struct {
	learner interface {
		alphaLearner
		Objective() *pcl.Objective
	}
	params          []*nn.Param // what a checkpoint holds (checkpointParams)
	env, evalEnv    envs.VecEnv // evalEnv nil without greedy evaluation
	sampler, evaler *collect.Collector[O]
	buf             *replay.Buffer[O] // nil without replay
	obsDim          int               // the width of an encoded observation (the replay file's)
	// snapshot, under --overlap, copies the learner's policy into the actor the sampler acts
	// with (nil: the sampler acts with the learner's own).
	snapshot func() error
	prof     profile
}

// member is what a network family does in a run besides what its parts do.
type member[O episode.Observation] interface {
	// begin is called once the run's state is new or restored (resumed), before the first
	// iteration.
	begin(ctx context.Context, resumed bool) error
	// sampled is shown iteration it's fresh experience b, collected in took, with its row.
	sampled(it int, b *collect.Batch[O], row *runstore.Row, took time.Duration) error
	// learn prepares the network to learn from b (before evaluation, the next collection under
	// --overlap and the training steps).
	learn(b *collect.Batch[O])
	// step takes one training step of iteration it on batch.
	step(it int, kind StepKind, batch []*episode.Trajectory[O]) (pcl.StepInfo, error)
	// trained is shown iteration it's learning and fills the family's columns of its row.
	trained(it int, done learned[O], row *runstore.Row) error
}

func (s *session[O]) Alpha() float64               { return s.learner.Alpha() }
func (s *session[O]) SetAlpha(alpha float64) error { return s.learner.SetAlpha(alpha) }

func (s *session[O]) Close() error {
	s.discardPrefetch()
	return closeEnvs(s.env, s.evalEnv)
}

// closeEnvs closes the envs of a regime that were made, and returns every Close error (a bridge
// env's server that fails to stop says so).
func closeEnvs(es ...envs.VecEnv) error {
	var errs []error
	for _, e := range es {
		if e != nil {
			errs = append(errs, e.Close())
		}
	}
	return errors.Join(errs...)
}

// closeKeepingErr closes c when a function returns. Its error becomes the function's (*err) when
// nothing failed before; after a failure it is joined to that error, so neither is lost.
func closeKeepingErr(err *error, c io.Closer) {
	cerr := c.Close()
	switch {
	case cerr == nil:
	case *err == nil:
		*err = fmt.Errorf("closing the envs: %w", cerr)
	default:
		*err = errors.Join(*err, fmt.Errorf("closing the envs: %w", cerr))
	}
}

func (s *session[O]) start(ctx context.Context, resume bool) (runstore.Meta, *runstore.Checkpoints, profile, error) {
	meta, cp := runstore.Meta{Config: s.cfg}, runstore.Dir(s.dir).NewCheckpoints()
	if s.prof.long {
		meta.Steps = &runstore.StepsState{LastMeanReturn: runstore.JSONFloat(math.NaN())}
	}
	if resume {
		var err error
		if meta, cp, err = s.resume(); err != nil {
			return runstore.Meta{}, nil, profile{}, err
		}
	}
	s.st = meta.Steps
	s.trainCur = algorithmic.SnapshotCurriculum(s.env)
	if err := s.fam.begin(ctx, resume); err != nil {
		return runstore.Meta{}, nil, profile{}, err
	}
	prof := s.prof
	prof.curriculum = algorithmic.CurriculumOf(s.env)
	return meta, cp, prof, nil
}

func (s *session[O]) sample(ctx context.Context, it int, row *runstore.Row) (int, error) {
	s.ctx = ctx
	start := time.Now()
	b, err := s.takePrefetch(it)
	if b == nil {
		b, err = s.collect(ctx, it)
	}
	if s.st != nil {
		s.st.EnvSeconds += b.EnvSeconds
		s.st.PolicySeconds += b.PolicySeconds
	}
	if err != nil {
		return 0, err
	}
	took := time.Since(start)
	s.fresh = *b
	row.MeanReward, row.Support, row.MaxProb = b.MeanReturn(), b.Stats.MeanSupport(), b.Stats.MeanMaxProb()
	if st := s.st; st != nil { // the statistics of the last on-policy steps, the last return
		collect.FillReturnsToGo(b.Ended, s.cfg.Gamma)
		row.MaxProb, row.Support = s.sampler.Window()
		if len(b.Returns) > 0 {
			st.LastMeanReturn = runstore.JSONFloat(b.MeanReturn())
			st.Episodes += int64(len(b.Returns))
		}
		row.MeanReward = float64(st.LastMeanReturn)
	}
	row.Curriculum = algorithmic.CurriculumOf(s.env)
	if err := s.fam.sampled(it, b, row, took); err != nil {
		return 0, err
	}
	return b.EnvSteps, nil
}

// collect takes iteration it's experience now, with the learner's current policy.
func (s *session[O]) collect(ctx context.Context, it int) (*collect.Batch[O], error) {
	if err := s.prepareCollect(it); err != nil {
		return &collect.Batch[O]{}, err
	}
	b, err := s.gather(ctx, it)
	return &b, err
}

// gather collects iteration it: whole episodes, or the next steps of long ones.
func (s *session[O]) gather(ctx context.Context, it int) (collect.Batch[O], error) {
	cfg := s.cfg
	if s.prof.long {
		return s.sampler.Segments(ctx, iterRNG(cfg.Seed, it, 1), cfg.StepsPerIter, it)
	}
	return s.sampler.Episodes(ctx, iterRNG(cfg.Seed, it, 1), collect.Sample, it, iterSeed(cfg.Seed, it, 2))
}

// train prepares the network, starts the next iteration's collection under --overlap, and
// learns (learning). The row's loss is the on-policy step's when there is one; its gradient norm
// the on-policy step's, for long episodes the replay steps'.
func (s *session[O]) train(it int, row *runstore.Row) (string, error) {
	t0 := time.Now()
	s.fam.learn(&s.fresh)
	if err := s.startPrefetch(it + 1); err != nil {
		return "overlap", err
	}
	cfg := s.cfg
	step := func(kind StepKind, batch []*episode.Trajectory[O]) (pcl.StepInfo, error) {
		return s.fam.step(it, kind, batch)
	}
	l := learning[O]{fresh: s.fresh.Trajectories, onPolicy: s.prof.onPolicy, buf: s.buf, k: cfg.GradientSteps(),
		batch: s.prof.replayBatch, step: step}
	if !s.prof.long {
		l.priorities = s.priorities
	}
	done, stage, err := l.run(cfg, iterRNG(cfg.Seed, it, 3))
	if err != nil {
		return stage, err
	}
	row.Loss, row.ReplayLoss, row.GradNorm = done.onPolicy.Loss, done.replayLoss, done.onPolicy.GradNorm
	if !s.prof.onPolicy {
		row.Loss = done.replayLoss
	}
	if s.prof.long {
		row.GradNorm = done.replayGradNorm
	}
	s.trainCur = algorithmic.SnapshotCurriculum(s.env)
	if err := s.fam.trained(it, done, row); err != nil {
		return "observer", err
	}
	if s.st != nil {
		s.st.TrainSeconds += time.Since(t0).Seconds()
	}
	return "", nil
}

// priorities are the fresh episodes' replay priorities: their return, their surplus over V as the
// on-policy step's values judged them, or (nil) their iteration.
func (s *session[O]) priorities() []float64 {
	switch s.cfg.ReplayPriority {
	case config.PriorityAdvantage:
		s.surplus = s.learner.Objective().Surpluses(s.surplus)
		return s.surplus
	case config.PriorityRecency:
		return nil
	}
	prio := make([]float64, len(s.fresh.Trajectories))
	for i, e := range s.fresh.Trajectories {
		prio[i] = e.TotalReward()
	}
	return prio
}

// evaluate plays the greedy policy at the training curriculum's current length.
func (s *session[O]) evaluate(ctx context.Context, it int) (float64, error) {
	t0 := time.Now()
	if err := algorithmic.SyncCurriculum(s.evalEnv, s.env); err != nil {
		return 0, err
	}
	ev, err := s.evaler.Episodes(ctx, iterRNG(s.cfg.Seed, it, 4), collect.Greedy, it, iterSeed(s.cfg.Seed, it, 5))
	if err != nil {
		return 0, err
	}
	if s.st != nil {
		s.st.EvalSeconds += time.Since(t0).Seconds()
	}
	return ev.MeanReturn(), nil
}

// save writes the checkpoint of meta.Iteration (nothing when it is on disk): the parameters, the
// replay, the training curriculum as the last completed iteration left it (a sample interrupted
// in mid-iteration has already reset the env), and for long episodes the sampler's state.
func (s *session[O]) save(cp *runstore.Checkpoints, meta runstore.Meta) error {
	if cp.Last() == meta.Iteration {
		return nil
	}
	meta.TrainCurriculum = s.trainCur
	if meta.Steps != nil {
		lost := s.discardPrefetch()
		meta.Steps.Window = s.sampler.WindowState()
		meta.Steps.MidEpisode = s.sampler.MidEpisode()
		if lost {
			// A stop between scheduled checkpoints: the next iteration's steps were taken and are
			// lost, so every copy starts a new episode on resume (which says so).
			meta.Steps.MidEpisode = s.cfg.NumEnvs
		}
	}
	var saveReplay func(string) error
	if s.buf != nil {
		saveReplay = s.buf.SaveFile
	}
	return cp.Write(meta, s.params, saveReplay)
}

// resume loads the checkpoint of the run directory (or, when it or its replay file is damaged,
// the fallback) into the learner, the replay, the training curriculum and, for long episodes, the
// sampler's statistics window. An older checkpoint's evaluation curriculum is ignored: evaluation
// copies the training one.
func (s *session[O]) resume() (runstore.Meta, *runstore.Checkpoints, error) {
	var notes []string
	restore := func(path string, f *checkpoint.File, meta runstore.Meta) (err error) {
		notes, err = s.restore(path, f, meta)
		return err
	}
	meta, cp, err := runstore.Dir(s.dir).ResumeCheckpoints(s.log, restore)
	if err != nil {
		return runstore.Meta{}, nil, err
	}
	ckptCfg := meta.Config
	ckptCfg.Iters = s.cfg.Iters
	if d := config.Diff(ckptCfg, s.cfg); d != nil {
		s.log.Warn("resume: config.json differs from the checkpoint's config; training continues with config.json", "fields", d)
	}
	meta.Config = s.cfg
	if len(notes) > 0 {
		s.log.Warn("resuming inexactly", "dir", s.dir, "iteration", meta.Iteration, "notes", notes)
	} else {
		s.log.Info("resuming", "dir", s.dir, "iteration", meta.Iteration)
	}
	return meta, cp, nil
}

// restore puts the checkpoint at path (read as f and meta) into the run; notes say what it
// cannot restore and restarts.
func (s *session[O]) restore(path string, f *checkpoint.File, meta runstore.Meta) (notes []string, err error) {
	if s.prof.long && meta.Steps == nil {
		return nil, fmt.Errorf("checkpoint %s has no long-episode state: it was not written by an mlp run", path)
	}
	if err := f.Apply(s.params); err != nil {
		return nil, fmt.Errorf("checkpoint %s does not match the run's networks: %w", path, err)
	}
	if s.buf != nil {
		if meta.ReplayFile == "" {
			notes = append(notes, "replay buffer restarts empty (the checkpoint has none)")
		} else if rp, err := runstore.ReplayPath(path, meta); err != nil {
			return nil, err
		} else if err := s.buf.LoadFile(rp, s.obsDim); err != nil {
			return nil, &runstore.FileError{Path: rp, Err: err}
		}
	}
	if meta.Steps != nil {
		if err := s.sampler.SetWindowState(meta.Steps.Window); err != nil {
			return nil, fmt.Errorf("checkpoint %s: statistics window: %w", path, err)
		}
		if n := meta.Steps.MidEpisode; n > 0 {
			notes = append(notes, fmt.Sprintf("the copies that were mid-episode at the checkpoint (%d) start new episodes", n))
		}
	}
	// Last: a failure above must leave the env as it was, for the fallback's restore.
	ok, err := algorithmic.RestoreVecCurriculum(s.env, meta.TrainCurriculum, "training")
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if !ok && algorithmic.SnapshotCurriculum(s.env) != nil {
		notes = append(notes, "training curriculum restarts (the checkpoint has none)")
	}
	return notes, nil
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
