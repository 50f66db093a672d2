package train

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/memory"
	"github.com/sparsepcl/sparsepcl/agent/progress"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
)

// regime is how a run gathers experience and learns from it; the loop (run) is the same for
// every run. One type implements it for both families, session (session.go), with the family's
// member (episodes.go: the LSTM's, steps.go: the MLPs'); the loop tests use a fake. What a regime
// only describes (its log fields, its traits) is data, its profile.
type regime interface {
	alphaLearner // the learner whose weight the alpha control sets

	// start returns the state of a new run, or with resume that of the run directory's
	// checkpoint, restored into the regime (exactly, or with a warning saying what is not), with
	// the regime's profile as it then stands.
	start(ctx context.Context, resume bool) (runstore.Meta, *runstore.Checkpoints, profile, error)
	// sample gathers iteration it's experience and fills the row's sampled columns (reward,
	// support, max-prob, curriculum); it returns the env steps taken.
	sample(ctx context.Context, it int, row *runstore.Row) (envSteps int, err error)
	// train stores the sampled experience and takes the iteration's gradient steps, filling the
	// loss columns; on error, stage names the step that failed. What the iteration's checkpoint
	// must save is taken by the end of it.
	train(it int, row *runstore.Row) (stage string, err error)
	// evaluate plays the greedy policy at iteration it and returns its mean return.
	evaluate(ctx context.Context, it int) (float64, error)
	// save writes the checkpoint of meta.Iteration into cp (nothing when it is on disk).
	save(cp *runstore.Checkpoints, meta runstore.Meta) error
	// Close releases the envs.
	Close() error
}

// profile is what the loop needs to know of a regime besides its work: its traits, and what
// its log lines, progress report and plots show.
type profile struct {
	// fields are the "training" log line's fields up to from; moreFields follow the memory
	// estimate (est) on that line.
	fields, moreFields []any
	est                memory.Estimate
	actions            int // the size of the policy's action space (for the plots)
	curriculum         int // the training curriculum's length as the run starts (0: none)
	// onPolicy: each iteration takes a step on its fresh experience before the replay steps,
	// whose batches have replayBatch trajectories.
	onPolicy    bool
	replayBatch int
	// evalAfter says which policy the greedy evaluation plays: the one that sampled the iteration
	// (false: evaluated before the training step) or the trained one (true).
	evalAfter bool
	// long: long episodes, collected cfg.StepsPerIter steps at a time (runstore.Meta.Steps holds
	// the collection's state, the last return and the time split), their replay priorities their
	// iteration; the row's max-prob and support are the last on-policy steps', its gradient norm
	// the replay steps'. The progress report counts env steps and calls the reward a return;
	// the checkpoint line shows the on-policy window and logs the process's memory (memory.csv,
	// to find slow growth over long runs); the summary has the env steps and the time split.
	long bool
}

// run is the training loop: per iteration sample, train (with the greedy evaluation before or
// after the training step, as the regime's traits say), log the metrics row, and checkpoint on schedule;
// a checkpoint and the plots are written at the end, also after a cancel.
func run(ctx context.Context, cfg config.Config, opts Options, reg regime) (sum Summary, err error) {
	l := &loop{cfg: cfg, reg: reg, dir: opts.Dir, log: opts.logger(), plot: opts.Plot}
	if l.meta, l.cp, l.prof, err = reg.start(ctx, opts.Resume); err != nil {
		return Summary{}, err
	}
	mw, rows, err := openRunMetrics(opts, cfg, l.meta.Iteration, l.log)
	if err != nil {
		return Summary{}, err
	}
	defer func() {
		if cerr := mw.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s: %w", runstore.MetricsFile, cerr)
		}
	}()
	l.mw, l.rows = mw, rows
	l.pr = progress.New(opts.Progress, l.meta.Iteration, cfg.Iters, l.prof.long)
	defer l.pr.BreakLine() // a run stopped by an error leaves no unterminated live line
	l.log = l.pr.Logger(l.log)
	if l.alphas, err = newAlphaControl(cfg, l.log, opts.fieldName); err != nil {
		return Summary{}, err
	}
	if err := l.alphas.restore(l.meta.AutoAlpha, reg); err != nil {
		return Summary{}, err
	}
	l.log.Info("training", progress.LogNums(l.describe()...)...)
	l.begin()
	firstIter := l.meta.Iteration
	for it := l.meta.Iteration; it < cfg.Iters; it++ {
		stop, err := l.iterate(ctx, it)
		if err != nil {
			return l.sum, err
		}
		if stop {
			break
		}
	}
	return l.end(firstIter)
}

// loop is one run of the training loop: the regime, the run's state and its outputs.
type loop struct {
	cfg    config.Config
	reg    regime
	prof   profile
	dir    string // the run directory
	log    *slog.Logger
	meta   runstore.Meta
	cp     *runstore.Checkpoints
	mw     *runstore.Writer
	rows   []runstore.Row
	pr     *progress.Reporter
	alphas *alphaControl
	plot   func(RunPlots) error // Options.Plot

	sum      Summary
	start    time.Time
	baseWall float64
	point    progress.Point
}

// begin starts the clock, the summary and the progress report.
func (l *loop) begin() {
	l.start, l.baseWall = time.Now(), l.meta.WallSeconds
	l.sum = Summary{Config: l.cfg, LastGreedy: math.NaN()}
	for _, r := range l.rows { // a resumed run's last evaluation may precede the resume
		if !math.IsNaN(r.GreedyReward) {
			l.sum.LastGreedy = r.GreedyReward
		}
	}
	l.point = progress.Point{Done: l.meta.Iteration, Reward: math.NaN(), Greedy: l.sum.LastGreedy,
		Curriculum: l.prof.curriculum, EnvSteps: l.meta.EnvSteps}
	if len(l.rows) > 0 { // a long-episode run's last return is carried over iterations without one, so is the row's
		l.point.Reward = l.rows[len(l.rows)-1].MeanReward
	}
	l.pr.Begin(l.point)
}

func (l *loop) stopped(it int, what string, err error) error {
	return stoppedError(l.cp, it, what, err)
}

// iterate runs iteration it; stop says the loop ends here (cancelled, or the threshold reached).
func (l *loop) iterate(ctx context.Context, it int) (stop bool, err error) {
	if ctx.Err() != nil {
		l.sum.Interrupted = true
		return true, nil
	}
	reg, cfg := l.reg, l.cfg
	row := runstore.Row{Iteration: it, GreedyReward: math.NaN(), Loss: math.NaN(), ReplayLoss: math.NaN(), Diagnostics: runstore.NoDiagnostics()}
	n, err := reg.sample(ctx, it, &row)
	if err != nil {
		if ctx.Err() != nil {
			l.sum.Interrupted = true
			return true, nil
		}
		return false, l.stopped(it, "sampling", err)
	}
	// Only on the schedule (not also at the last iteration): a run cut short and resumed must
	// evaluate exactly as the uninterrupted run.
	due := cfg.EvalEvery > 0 && it%cfg.EvalEvery == 0
	if due && !l.prof.evalAfter {
		if err := l.evaluate(ctx, it, &row); err != nil {
			return false, err
		}
	}
	if err := l.alphas.apply(it, row.MaxProb, reg); err != nil {
		return false, l.stopped(it, "alpha", err)
	}
	row.Alpha = reg.Alpha()
	if stage, err := reg.train(it, &row); err != nil {
		return false, l.stopped(it, stage, err)
	}
	l.meta.EnvSteps += int64(n)
	if due && l.prof.evalAfter {
		if err := l.evaluate(ctx, it, &row); err != nil {
			return false, err
		}
	}
	if err := l.record(it, row); err != nil {
		return false, err
	}
	if cfg.StopAtThreshold && row.GreedyReward >= cfg.RewardThreshold {
		l.log.Info("reward threshold reached", progress.LogNums("iteration", it, "greedy", row.GreedyReward, "threshold", cfg.RewardThreshold)...)
		return true, nil
	}
	return false, nil
}

// evaluate plays the greedy policy into row. Not cancellable: stopping in mid-iteration would
// save one iteration's parameters under another; the stop comes at the next one.
func (l *loop) evaluate(ctx context.Context, it int, row *runstore.Row) error {
	g, err := l.reg.evaluate(context.WithoutCancel(ctx), it)
	if err != nil {
		return l.stopped(it, "greedy evaluation", err)
	}
	row.GreedyReward, l.sum.LastGreedy = g, g
	return nil
}

// record ends iteration it: the run's state, the metrics row, the progress report and, on
// schedule, a checkpoint with the plots.
func (l *loop) record(it int, row runstore.Row) error {
	meta := &l.meta
	meta.Iteration, meta.AutoAlpha = it+1, l.alphas.state()
	meta.WallSeconds = l.baseWall + time.Since(l.start).Seconds()
	row.EnvSteps, row.WallSeconds = meta.EnvSteps, meta.WallSeconds
	l.rows = append(l.rows, row)
	if err := l.mw.Write(row); err != nil {
		return l.stopped(it, "metrics", err)
	}
	l.alphas.observe(row)
	l.point = progress.Point{Done: meta.Iteration, Reward: row.MeanReward, Greedy: l.sum.LastGreedy, Curriculum: row.Curriculum, EnvSteps: meta.EnvSteps}
	l.pr.Update(l.point)
	if l.cfg.CheckpointEvery > 0 && meta.Iteration%l.cfg.CheckpointEvery == 0 {
		if err := l.reg.save(l.cp, *meta); err != nil {
			return err
		}
		l.writePlots()
		l.checkpointed(row)
	}
	return nil
}

// writePlots hands the rows so far to the caller's Options.Plot, if any: the library draws nothing.
func (l *loop) writePlots() {
	if l.plot == nil {
		return
	}
	if err := l.plot(RunPlots{Dir: l.dir, Config: l.cfg, Actions: l.prof.actions, Rows: l.rows, EnvSteps: l.prof.long}); err != nil {
		l.log.Warn("plots not written", "err", err)
	}
}

// end saves the last checkpoint and the plots and completes the summary of a run whose process
// started at iteration firstIter.
func (l *loop) end(firstIter int) (Summary, error) {
	if err := l.reg.save(l.cp, l.meta); err != nil {
		return l.sum, err
	}
	l.writePlots()
	sum := &l.sum
	sum.Iterations = l.meta.Iteration
	sum.Rows = l.rows
	fields := []any{"dir", l.dir, "iterations", l.meta.Iteration}
	if l.prof.long {
		sum.EnvSteps, sum.Steps = l.meta.EnvSteps, l.meta.Steps
		fields = append(fields, "env_steps", l.meta.EnvSteps)
	}
	fields = append(fields, "interrupted", sum.Interrupted, "greedy", sum.LastGreedy)
	if st := sum.Steps; st != nil {
		fields = append(fields, "env_s", st.EnvSeconds, "policy_s", st.PolicySeconds, "train_s", st.TrainSeconds, "eval_s", st.EvalSeconds)
	}
	if n := l.meta.Iteration - firstIter; n > 0 {
		sum.SecondsPerIt = time.Since(l.start).Seconds() / float64(n)
	}
	if perr := l.pr.End(l.point, sum.Interrupted); perr != nil {
		return *sum, fmt.Errorf("progress output: %w", perr)
	}
	l.log.Info("run saved", progress.LogNums(fields...)...)
	return *sum, nil
}

// describe is the "training" log line's fields.
func (l *loop) describe() []any {
	fields := append(append([]any(nil), l.prof.fields...), "from", l.meta.Iteration, "memory_estimate", memory.FormatBytes(l.prof.est.Total()))
	return append(append(fields, l.prof.moreFields...), "dir", l.dir)
}

// checkpointed logs the scheduled checkpoint that ended with row (a long-episode run also
// logs the process's memory).
func (l *loop) checkpointed(row runstore.Row) {
	meta := l.meta
	fields := []any{"iteration", meta.Iteration, "reward", row.MeanReward, "greedy", l.sum.LastGreedy,
		"curriculum", row.Curriculum, "loss", row.Loss}
	if l.prof.long {
		if err := runstore.Dir(l.dir).LogMemory(meta.Iteration, meta.EnvSteps); err != nil {
			l.log.Warn("memory not logged", "err", err)
		}
		fields = []any{"iteration", meta.Iteration, "env_steps", meta.EnvSteps, "return", row.MeanReward,
			"greedy", l.sum.LastGreedy, "max_prob", row.MaxProb, "support", row.Support}
	}
	if !l.pr.IsLive() {
		l.log.Info("checkpoint", progress.LogNums(append(fields, "s/it", meta.WallSeconds/float64(meta.Iteration))...)...)
	}
}
