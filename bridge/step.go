package bridge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sparsepcl/sparsepcl/bridge/internal/transport"
	"github.com/sparsepcl/sparsepcl/bridge/internal/wire"
	"github.com/sparsepcl/sparsepcl/envs"
)

// checkActions rejects actions of the wrong dtype, shape or range before anything is sent.
func (e *VecEnv) checkActions(a envs.Array, rows, offset int) error {
	if err := a.Validate(); err != nil {
		return fmt.Errorf("bridge: actions: %w", err)
	}
	if a.DType != e.actSpace.DType() {
		return fmt.Errorf("bridge: actions have dtype %s, %v needs %s", a.DType, e.actSpace, e.actSpace.DType())
	}
	if a.Rows() != rows || a.RowSize() != e.actSize {
		return fmt.Errorf("bridge: actions have shape %v, want %d rows of %d elements", a.Shape, rows, e.actSize)
	}
	first := 0
	if e.actCheck != nil {
		if first = e.actCheck.firstBad(a, rows); first < 0 {
			return nil
		}
	}
	for r := first; r < rows; r++ {
		v, err := envs.ReadRow(e.actSpace, a, r)
		if err == nil {
			err = e.actSpace.Check(v)
		}
		if err != nil {
			return fmt.Errorf("bridge: action of copy %d: %w", offset+r, err)
		}
	}
	return nil
}

// PendingStep is a sub-batch step sent with StepAsync whose results have not been collected.
type PendingStep struct {
	e      *VecEnv
	lo, hi int
	parts  []stepPart
	// ctx is StepAsync's: cancelling it fails the sub-batch. Config.Timeout bounds the Wait, not the
	// time between StepAsync and Wait, so results collected late are still good.
	ctx context.Context
}

type stepPart struct {
	sh     *shard
	p      *transport.Pending
	lo, hi int // global copy range of this part
}

// StepAsync validates and sends the actions of copies [lo, hi) (rows of actions: hi-lo) and returns
// without waiting, so the caller can work while the servers step. Collect with Wait. Sub-batches in
// flight must not overlap.
func (e *VecEnv) StepAsync(ctx context.Context, lo, hi int, actions envs.Array) (*PendingStep, error) {
	if err := e.usable(false); err != nil {
		return nil, err
	}
	if lo < 0 || hi > e.n || lo >= hi {
		return nil, fmt.Errorf("bridge: step: copy range [%d, %d) not inside [0, %d)", lo, hi, e.n)
	}
	if err := e.checkActions(actions, hi-lo, lo); err != nil {
		return nil, err
	}
	ps := &PendingStep{e: e, lo: lo, hi: hi, ctx: ctx}
	d := e.actSpace.DType()
	// The sending is bounded like a call (a server that stopped reading fills the socket's buffer).
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(e.cfg.Timeout)
	}
	for _, sh := range e.shards {
		a, b := max(lo, sh.lo), min(hi, sh.hi)
		if a >= b {
			continue
		}
		part := envs.Array{DType: actions.DType}
		if d.IsFloat() {
			part.Floats = actions.Floats[(a-lo)*e.actSize : (b-lo)*e.actSize]
		} else {
			part.Ints = actions.Ints[(a-lo)*e.actSize : (b-lo)*e.actSize]
		}
		req := wire.AppendStepRequest(make([]byte, 0, 96+(b-a)*e.actSize*wire.ItemSize(d)), sh.handle, a-sh.lo, b-sh.lo, part, d, b-a, e.actSize)
		p, err := sh.c.Send(deadline, "step", req)
		if err != nil {
			ps.abandon()
			if len(ps.parts) > 0 {
				e.settle(err) // other servers got their part
			}
			return nil, err
		}
		ps.parts = append(ps.parts, stepPart{sh: sh, p: p, lo: a, hi: b})
	}
	return ps, nil
}

func (ps *PendingStep) abandon() {
	for _, pt := range ps.parts {
		pt.p.Abandon()
	}
}

// Wait collects a sub-batch into the VecEnv's step buffers (rows [lo, hi) of StepResult) and returns
// the whole-batch StepResult; rows outside [lo, hi) hold whatever the last steps left there.
func (ps *PendingStep) Wait(ctx context.Context) (envs.StepResult, error) {
	e := ps.e
	ctx, cancel := transport.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	var firstErr error
	if e.cfg.Infos && e.res.Infos == nil {
		e.res.Infos = make([]envs.Info, e.n)
	}
	envSec, serverSec := 0.0, 0.0
	for _, pt := range ps.parts {
		var r wire.StepReply
		err := recv(ctx, pt.p, &r)
		if err == nil && ps.ctx.Err() != nil {
			err = fmt.Errorf("bridge: step: %w", context.Cause(ps.ctx))
		}
		if err != nil {
			e.settle(err)
			firstErr = cmpErr(firstErr, e.shiftCopy(err, pt.sh))
			continue
		}
		if err := e.storeStep(&r, pt.lo, pt.hi); err != nil {
			err = pt.sh.c.Violation("step", err)
			e.settle(err)
			firstErr = cmpErr(firstErr, err)
			continue
		}
		if e.cfg.Infos {
			for i := pt.lo; i < pt.hi; i++ {
				e.res.Infos[i] = nil
			}
			e.storeInfos(e.res.Infos, r.Infos, pt.lo, pt.hi)
		}
		envSec += r.EnvSeconds
		serverSec += r.ServerSeconds
	}
	e.EnvSeconds, e.ServerSeconds = envSec, serverSec
	if firstErr != nil {
		return envs.StepResult{}, firstErr
	}
	return e.res, nil
}

// storeStep checks a step reply for copies [lo, hi) and stores its arrays into the step buffers.
func (e *VecEnv) storeStep(r *wire.StepReply, lo, hi int) error {
	m := hi - lo
	if err := e.storeObs(e.res.Obs, &r.Obs, lo, hi); err != nil {
		return err
	}
	if err := wire.CheckArray(&r.Rewards, "rewards", envs.Float64, []int{m}); err != nil {
		return err
	}
	if err := wire.CheckArray(&r.Terminated, "terminated flags", envs.Bool, []int{m}); err != nil {
		return err
	}
	if err := wire.CheckArray(&r.Truncated, "truncated flags", envs.Bool, []int{m}); err != nil {
		return err
	}
	wire.DecodeInto(&r.Rewards, envs.Float64, e.res.Rewards[lo:hi], nil)
	for i := range m {
		e.res.Terminated[lo+i] = r.Terminated.Data[i] != 0
		e.res.Truncated[lo+i] = r.Truncated.Data[i] != 0
	}
	return nil
}

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

// Step implements envs.VecEnv: one batch, each server stepping its copies at the same time.
func (e *VecEnv) Step(ctx context.Context, actions envs.Array) (envs.StepResult, error) {
	ps, err := e.StepAsync(ctx, 0, e.n, actions)
	if err != nil {
		return envs.StepResult{}, err
	}
	return ps.Wait(ctx)
}
