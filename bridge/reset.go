package bridge

import (
	"context"
	"fmt"

	"github.com/sparsepcl/sparsepcl/bridge/internal/transport"
	"github.com/sparsepcl/sparsepcl/bridge/internal/wire"
	"github.com/sparsepcl/sparsepcl/envs"
)

// Reset implements envs.VecEnv.
func (e *VecEnv) Reset(ctx context.Context, req envs.ResetRequest) (envs.Array, []envs.Info, error) {
	if err := e.checkReset(req); err != nil {
		return envs.Array{}, nil, err
	}
	ctx, cancel := transport.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	var all []sentReset
	for _, sh := range e.shards {
		r, ok := resetRequest(sh, req)
		if !ok {
			continue
		}
		p, err := send(ctx, sh.c, "reset", r)
		if err != nil {
			for _, s := range all {
				s.p.Abandon()
			}
			e.settle(err)
			return envs.Array{}, nil, err
		}
		all = append(all, sentReset{sh, p})
	}
	var infos []envs.Info
	if e.cfg.Infos {
		infos = make([]envs.Info, e.n)
	}
	e.EnvSeconds, e.ServerSeconds = 0, 0
	var firstErr error
	for _, s := range all {
		firstErr = cmpErr(firstErr, e.receiveReset(ctx, s, infos))
	}
	if firstErr != nil {
		return envs.Array{}, nil, firstErr
	}
	if req.Mask == nil {
		e.unknown = nil // every copy was reset: the state is known again
	}
	return e.obs, infos, nil
}

// sentReset is a reset request in flight to one shard.
type sentReset struct {
	sh *shard
	p  *transport.Pending
}

// checkReset checks that the VecEnv can reset and that req fits its copies.
func (e *VecEnv) checkReset(req envs.ResetRequest) error {
	if err := e.usable(req.Mask == nil); err != nil {
		return err
	}
	for name, l := range map[string]int{"Seeds": len(req.Seeds), "Mask": len(req.Mask), "PerCopy": len(req.PerCopy)} {
		if l != 0 && l != e.n {
			return fmt.Errorf("bridge: reset: %s has %d entries for %d copies", name, l, e.n)
		}
	}
	for i, s := range req.Seeds {
		if s < 0 {
			return fmt.Errorf("bridge: reset: copy %d: negative seed %d", i, s)
		}
	}
	return nil
}

// resetRequest is the reset request of req's copies on shard sh; ok is false when the mask
// selects none of them.
func resetRequest(sh *shard, req envs.ResetRequest) (r map[string]any, ok bool) {
	r = map[string]any{"op": "reset", "handle": sh.handle}
	if req.Mask != nil {
		m := req.Mask[sh.lo:sh.hi]
		anySet := false
		ints := make([]int64, len(m))
		for i, b := range m {
			if b {
				ints[i], anySet = 1, true
			}
		}
		if !anySet {
			return nil, false
		}
		r["mask"] = wire.EncodeArray(envs.Array{DType: envs.Bool, Ints: ints}, envs.Bool, []int{len(m)})
	}
	if req.Seeds != nil {
		r["seeds"] = req.Seeds[sh.lo:sh.hi]
	}
	if req.Options != nil {
		r["options"] = req.Options
	}
	if req.PerCopy != nil {
		r["per_copy"] = req.PerCopy[sh.lo:sh.hi]
	}
	return r, true
}

// receiveReset takes one shard's reset reply into the observations and infos.
func (e *VecEnv) receiveReset(ctx context.Context, s sentReset, infos []envs.Info) error {
	var r wire.ResetReply
	if err := recv(ctx, s.p, &r); err != nil {
		e.settle(err)
		return e.shiftCopy(err, s.sh)
	}
	if err := e.storeObs(e.obs, &r.Obs, s.sh.lo, s.sh.hi); err != nil {
		err = s.sh.c.Violation("reset", err)
		e.settle(err)
		return err
	}
	e.storeInfos(infos, r.Infos, s.sh.lo, s.sh.hi)
	e.EnvSeconds += r.EnvSeconds
	e.ServerSeconds += r.ServerSeconds
	return nil
}

// storeObs checks a received observation batch and copies it into rows [lo, hi) of dst.
func (e *VecEnv) storeObs(dst envs.Array, w *wire.Array, lo, hi int) error {
	d := e.obsSpace.DType()
	if err := wire.CheckArray(w, "observations", d, []int{hi - lo, e.obsSize}); err != nil {
		return err
	}
	if d.IsFloat() {
		wire.DecodeInto(w, d, dst.Floats[lo*e.obsSize:hi*e.obsSize], nil)
	} else {
		wire.DecodeInto(w, d, nil, dst.Ints[lo*e.obsSize:hi*e.obsSize])
	}
	return nil
}

func (e *VecEnv) storeInfos(dst []envs.Info, src []map[string]any, lo, hi int) {
	if dst == nil || len(src) != hi-lo {
		return
	}
	for i, m := range src {
		if m != nil {
			dst[lo+i] = envs.Info(wire.PlainInfo(m).(map[string]any))
		}
	}
}
