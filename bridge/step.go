package bridge

import (
	"context"
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

// Step implements envs.VecEnv: one batch, each server stepping its copies at the same time.
func (e *VecEnv) Step(ctx context.Context, actions envs.Array) (envs.StepResult, error) {
	ps, err := e.StepAsync(ctx, 0, e.n, actions)
	if err != nil {
		return envs.StepResult{}, err
	}
	return ps.Wait(ctx)
}
