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
	"github.com/sparsepcl/sparsepcl/agent/runstore"
)

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
	K, dim := r.net.Model.NumActions(), r.enc.Dim()
	s := &session[float32]{cfg: cfg, dir: opts.Dir, log: log, fam: steps{r.net}, parts: r.parts}
	if r.actor != nil {
		s.snapshot = func() error { return snapshotActor(r.net, r.actor) }
	}
	s.prof = profile{long: true, est: est, actions: K, onPolicy: cfg.OnPolicyStep, replayBatch: cfg.SubEpisodes,
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
