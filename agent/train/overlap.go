package train

import (
	"context"
	"fmt"

	"github.com/sparsepcl/sparsepcl/agent/collect"
)

// The steps regime's --overlap: while iteration it trains, the env copies take iteration it+1's
// steps with a snapshot of the policy taken before it's training steps (r.actor), so that env
// stepping (mostly the env server's time, in another process) and training run side by side.
//
//   - Without --overlap nothing here runs and every run is what it was.
//   - The snapshot is taken at a fixed point of the iteration and the collection draws from its
//     own generator, so a run with --overlap is a function of its seed too.
//   - The iteration after a scheduled checkpoint is collected when it starts, with the trained
//     policy: a checkpoint is never taken with the next iteration's steps already gone, so a
//     resume is exact. Only a stop between scheduled checkpoints loses them (save says so).
//   - The returns to go of the episodes a prefetch ended are filled by sample, on the training
//     goroutine: they write into sub-episodes the replay holds.

// prefetch is iteration it's collection running beside the training steps.
type prefetch struct {
	it   int
	done chan struct{}
	col  collect.Batch[float32]
	err  error
}

// collect takes iteration it's steps now, with the learner's current policy.
func (r *steps) collect(ctx context.Context, it int) (*collect.Batch[float32], error) {
	if err := r.prepareCollect(it); err != nil {
		return &collect.Batch[float32]{}, err
	}
	col, err := r.sampler.Segments(ctx, iterRNG(r.cfg.Seed, it, 1), r.cfg.StepsPerIter, it)
	return &col, err
}

// prepareCollect sets iteration it's exploration and, under --overlap, takes the snapshot the
// collection acts with.
func (r *steps) prepareCollect(it int) error {
	if err := explore(r.sampler, r.cfg, it); err != nil {
		return err
	}
	if r.actor == nil {
		return nil
	}
	return r.snapshot()
}

// snapshot copies the learner's parameters, normaliser statistics and weight into the actor.
func (r *steps) snapshot() error {
	from, to := r.learner.Model, r.actor
	fp, tp := from.Params(), to.Params()
	if from.Norm != nil {
		fp, tp = append(fp[:len(fp):len(fp)], from.Norm.Stats), append(tp[:len(tp):len(tp)], to.Norm.Stats)
	}
	for i, p := range fp {
		copy(tp[i].Value.Data, p.Value.Data)
	}
	if err := to.Layout().SetAlpha(r.learner.Alpha()); err != nil {
		return fmt.Errorf("overlap: %w", err)
	}
	return nil
}

// startPrefetch starts collecting iteration it beside the training steps, under --overlap,
// unless it is past the run's end or follows a scheduled checkpoint.
func (r *steps) startPrefetch(it int) error {
	ce := r.cfg.CheckpointEvery
	if r.actor == nil || it >= r.cfg.Iters || (ce > 0 && it%ce == 0) || r.ctx == nil {
		return nil
	}
	if err := r.prepareCollect(it); err != nil {
		return err
	}
	p := &prefetch{it: it, done: make(chan struct{})}
	r.pending = p
	go func(ctx context.Context) {
		defer close(p.done)
		p.col, p.err = r.sampler.Segments(ctx, iterRNG(r.cfg.Seed, it, 1), r.cfg.StepsPerIter, it)
	}(r.ctx)
	return nil
}

// takePrefetch waits for iteration it's collection when one was started (nil when none was).
func (r *steps) takePrefetch(it int) (*collect.Batch[float32], error) {
	p := r.pending
	if p == nil || p.it != it {
		return nil, nil
	}
	<-p.done
	r.pending = nil
	return &p.col, p.err
}

// discardPrefetch waits for a collection in flight and drops it; it reports whether there was
// one.
func (r *steps) discardPrefetch() bool {
	p := r.pending
	if p == nil {
		return false
	}
	<-p.done
	r.pending = nil
	return true
}
