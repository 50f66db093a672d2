package train

import (
	"context"

	"github.com/sparsepcl/sparsepcl/agent/collect"
	"github.com/sparsepcl/sparsepcl/agent/episode"
)

// The --overlap of long episodes: while iteration it trains, the env copies take iteration it+1's
// steps with a snapshot of the policy taken before it's training steps (parts.snapshot), so that
// env stepping (mostly the env server's time, in another process) and training run side by side.
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
type prefetch[O episode.Observation] struct {
	it   int
	done chan struct{}
	col  collect.Batch[O]
	err  error
}

// prepareCollect sets iteration it's exploration and, under --overlap, takes the snapshot the
// collection acts with.
func (s *session[O]) prepareCollect(it int) error {
	if err := explore(s.sampler, s.cfg, it); err != nil {
		return err
	}
	if s.snapshot == nil {
		return nil
	}
	return s.snapshot()
}

// startPrefetch starts collecting iteration it beside the training steps, under --overlap,
// unless it is past the run's end or follows a scheduled checkpoint.
func (s *session[O]) startPrefetch(it int) error {
	ce := s.cfg.CheckpointEvery
	if s.snapshot == nil || it >= s.cfg.Iters || (ce > 0 && it%ce == 0) || s.ctx == nil {
		return nil
	}
	if err := s.prepareCollect(it); err != nil {
		return err
	}
	p := &prefetch[O]{it: it, done: make(chan struct{})}
	s.pending = p
	go func(ctx context.Context) {
		defer close(p.done)
		p.col, p.err = s.gather(ctx, it)
	}(s.ctx)
	return nil
}

// takePrefetch waits for iteration it's collection when one was started (nil when none was).
func (s *session[O]) takePrefetch(it int) (*collect.Batch[O], error) {
	p := s.pending
	if p == nil || p.it != it {
		return nil, nil
	}
	<-p.done
	s.pending = nil
	return &p.col, p.err
}

// discardPrefetch waits for a collection in flight and drops it; it reports whether there was
// one.
func (s *session[O]) discardPrefetch() bool {
	p := s.pending
	if p == nil {
		return false
	}
	<-p.done
	s.pending = nil
	return true
}
