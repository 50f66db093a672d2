package bridge

import (
	"context"
	"errors"
	"fmt"

	"github.com/sparsepcl/sparsepcl/bridge/internal/transport"
	"github.com/sparsepcl/sparsepcl/envs"
)

// arrived reports whether every part of the sub-batch has its reply (or error) waiting.
func (ps *PendingStep) arrived() bool {
	for _, pt := range ps.parts {
		if !pt.p.Arrived() {
			return false
		}
	}
	return true
}

// WaitAny waits until one of the sub-batches in flight has all its results, collects it as Wait does
// and returns its index in steps; nil entries are skipped. With sub-batches on several servers it
// serves whichever server finished first, so each can be handed its next actions at once (the
// asynchronous stepping of EnvPool's send/recv). The index is valid even when err is not nil. The
// wait is bounded by ctx (or Config.Timeout), not by the contexts the sub-batches were sent with.
func (e *VecEnv) WaitAny(ctx context.Context, steps []*PendingStep) (int, envs.StepResult, error) {
	ctx, cancel := transport.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	anyArrived := func() bool {
		for _, ps := range steps {
			if ps != nil && ps.arrived() {
				return true
			}
		}
		return false
	}
	for {
		// The connections with replies outstanding.
		var c1, c2 *transport.Conn
		live, last := 0, -1
		for i, ps := range steps {
			if ps == nil {
				continue
			}
			if ps.e != e {
				return i, envs.StepResult{}, errors.New("bridge: WaitAny given a sub-batch of another VecEnv")
			}
			if ps.arrived() {
				res, err := ps.Wait(ctx)
				return i, res, err
			}
			live, last = live+1, i
			for _, pt := range ps.parts {
				switch {
				case pt.p.Arrived() || pt.p.Conn() == c1:
				case c1 == nil:
					c1 = pt.p.Conn()
				default:
					c2 = pt.p.Conn()
					pt.p.Conn().EnsurePump()
				}
			}
		}
		switch {
		case live == 0:
			return -1, envs.StepResult{}, errors.New("bridge: WaitAny with no sub-batch in flight")
		case live == 1: // nothing to choose between: Wait reads each of its connections in turn
			res, err := steps[last].Wait(ctx)
			return last, res, err
		}
		if c2 != nil {
			// Several connections: a pump reads each, and whichever delivers first wakes us.
			c1.EnsurePump()
			select {
			case <-e.delivered:
				continue
			case <-ctx.Done():
				return -1, envs.StepResult{}, fmt.Errorf("bridge: wait for any of %d sub-batches: %w", len(steps), context.Cause(ctx))
			}
		}
		// One connection: read it here, unless someone else already does.
		if err := c1.ReadUntil(ctx, anyArrived, e.delivered); err != nil && !anyArrived() {
			if ctx.Err() != nil {
				return -1, envs.StepResult{}, fmt.Errorf("bridge: wait for any of %d sub-batches: %w", len(steps), context.Cause(ctx))
			}
			return -1, envs.StepResult{}, err
		}
	}
}
