package train

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/config"
)

// regime is how a run gathers experience and learns from it; the loop (run) is the same for
// every run. Each network family makes its own (Family.newRegime): episodes.go is the LSTM's
// (whole fresh episodes per iteration), steps.go the MLPs' (a fixed number of steps per copy cut
// into sub-episodes).
type regime interface {
	alphaLearner // the learner whose weight the alpha control sets

	// start returns the state of a new run, or with resume that of the run directory's
	// checkpoint, restored into the regime (exactly, or with a warning saying what is not).
	start(ctx context.Context, resume bool) (Meta, *checkpoints, error)
	// traits are the loop's fixed choices for the regime.
	traits() traits
	// describe is the "training" log line's fields for a run starting at iteration from.
	describe(from int) []any
	// startPoint is the progress report's state before the first iteration of this process.
	startPoint(meta Meta, rows []Row) progressPoint

	// sample gathers iteration it's experience and fills the row's sampled columns (reward,
	// support, max-prob, curriculum); it returns the env steps taken.
	sample(ctx context.Context, it int, row *Row) (envSteps int, err error)
	// train stores the sampled experience and takes the iteration's gradient steps, filling the
	// loss columns; on error, stage names the step that failed. What the iteration's checkpoint
	// must save is taken by the end of it.
	train(it int, row *Row) (stage string, err error)
	// evaluate plays the greedy policy at iteration it and returns its mean return.
	evaluate(ctx context.Context, it int) (float64, error)

	// save writes the checkpoint of meta.Iteration into cp (nothing when it is on disk).
	save(cp *checkpoints, meta Meta) error
	plots(rows []Row) error
	// checkpointed is called after a scheduled checkpoint; it returns the log line's fields.
	checkpointed(meta Meta, row Row, greedy float64) []any
	// finish completes the summary of a run saved in dir and returns the "run saved" log line's
	// fields.
	finish(sum *Summary, meta Meta, dir string) []any
	// close releases the envs.
	close()
}

// traits are a regime's fixed choices of the loop.
type traits struct {
	// evalAfter says which policy the greedy evaluation plays: the one that sampled the iteration
	// (false: evaluated before the training step) or the trained one (true).
	evalAfter bool
	// envSteps: the progress report counts env steps and calls the reward a return.
	envSteps bool
}

// run is the training loop: per iteration sample, train (with the greedy evaluation before or
// after the training step, as the regime's traits say), log the metrics row, and checkpoint on schedule;
// a checkpoint and the plots are written at the end, also after a cancel.
func run(ctx context.Context, cfg config.Config, opts Options, reg regime) (sum Summary, err error) {
	log := opts.logger()
	tr := reg.traits()
	meta, cp, err := reg.start(ctx, opts.Resume)
	if err != nil {
		return Summary{}, err
	}
	mw, rows, err := openRunMetrics(opts, cfg, meta.Iteration, log)
	if err != nil {
		return Summary{}, err
	}
	defer func() {
		if cerr := mw.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s: %w", MetricsFile, cerr)
		}
	}()
	pr := newProgress(opts, meta.Iteration, cfg.Iters, tr.envSteps)
	defer pr.breakLine() // a run stopped by an error leaves no unterminated live line
	log = pr.logger(log)
	alphas, err := newAlphaControl(cfg, log, opts.fieldName)
	if err != nil {
		return Summary{}, err
	}
	if err := alphas.restore(meta.AutoAlpha, reg); err != nil {
		return Summary{}, err
	}
	log.Info("training", logNums(reg.describe(meta.Iteration)...)...)

	writePlots := func() {
		if err := reg.plots(rows); err != nil {
			log.Warn("plots not written", "err", err)
		}
	}
	stopped := func(it int, what string, err error) error { return stoppedError(cp, it, what, err) }
	start := time.Now()
	baseWall := meta.WallSeconds
	sum = Summary{Config: cfg, LastGreedy: math.NaN()}
	for _, r := range rows { // a resumed run's last evaluation may precede the resume
		if !math.IsNaN(r.GreedyReward) {
			sum.LastGreedy = r.GreedyReward
		}
	}
	point := reg.startPoint(meta, rows)
	point.Greedy = sum.LastGreedy
	pr.begin(point)
	firstIter := meta.Iteration
	for it := meta.Iteration; it < cfg.Iters; it++ {
		if ctx.Err() != nil {
			sum.Interrupted = true
			break
		}
		row := Row{Iteration: it, GreedyReward: math.NaN(), Loss: math.NaN(), ReplayLoss: math.NaN(), Diagnostics: NoDiagnostics()}
		n, err := reg.sample(ctx, it, &row)
		if err != nil {
			if ctx.Err() != nil {
				sum.Interrupted = true
				break
			}
			return sum, stopped(it, "sampling", err)
		}
		// Only on the schedule (not also at the last iteration): a run cut short and resumed must
		// evaluate exactly as the uninterrupted run. Not cancellable: stopping in mid-iteration
		// would save one iteration's parameters under another; the stop comes at the next one.
		evaluate := func() error {
			g, err := reg.evaluate(context.WithoutCancel(ctx), it)
			if err != nil {
				return stopped(it, "greedy evaluation", err)
			}
			row.GreedyReward, sum.LastGreedy = g, g
			return nil
		}
		due := cfg.EvalEvery > 0 && it%cfg.EvalEvery == 0
		if due && !tr.evalAfter {
			if err := evaluate(); err != nil {
				return sum, err
			}
		}
		if err := alphas.apply(it, row.MaxProb, reg); err != nil {
			return sum, stopped(it, "alpha", err)
		}
		row.Alpha = reg.Alpha()
		if stage, err := reg.train(it, &row); err != nil {
			return sum, stopped(it, stage, err)
		}
		meta.EnvSteps += int64(n)
		if due && tr.evalAfter {
			if err := evaluate(); err != nil {
				return sum, err
			}
		}
		meta.Iteration, meta.AutoAlpha = it+1, alphas.state()
		meta.WallSeconds = baseWall + time.Since(start).Seconds()
		row.EnvSteps, row.WallSeconds = meta.EnvSteps, meta.WallSeconds
		rows = append(rows, row)
		if err := mw.write(row); err != nil {
			return sum, stopped(it, "metrics", err)
		}
		alphas.observe(row)
		point = progressPoint{Done: meta.Iteration, Reward: row.MeanReward, Greedy: sum.LastGreedy, Curriculum: row.Curriculum, EnvSteps: meta.EnvSteps}
		pr.update(point)
		if cfg.CheckpointEvery > 0 && meta.Iteration%cfg.CheckpointEvery == 0 {
			if err := reg.save(cp, meta); err != nil {
				return sum, err
			}
			writePlots()
			fields := reg.checkpointed(meta, row, sum.LastGreedy)
			if pr == nil || pr.format != ProgressLive {
				log.Info("checkpoint", logNums(fields...)...)
			}
		}
		if cfg.StopAtThreshold && row.GreedyReward >= cfg.RewardThreshold {
			log.Info("reward threshold reached", logNums("iteration", it, "greedy", row.GreedyReward, "threshold", cfg.RewardThreshold)...)
			break
		}
	}
	if err := reg.save(cp, meta); err != nil {
		return sum, err
	}
	writePlots()
	sum.Iterations = meta.Iteration
	sum.Rows = rows
	fields := reg.finish(&sum, meta, opts.Dir)
	if n := meta.Iteration - firstIter; n > 0 {
		sum.SecondsPerIt = time.Since(start).Seconds() / float64(n)
	}
	if perr := pr.end(point, sum.Interrupted); perr != nil {
		return sum, fmt.Errorf("progress output: %w", perr)
	}
	log.Info("run saved", logNums(fields...)...)
	return sum, nil
}
