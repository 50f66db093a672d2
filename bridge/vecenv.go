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

// Config describes the remote VecEnv to make.
type Config struct {
	EnvID   string         // a registered Gymnasium id, e.g. "HalfCheetah-v5" or "Copy-v0"
	Kwargs  map[string]any // passed to gymnasium.make
	NumEnvs int
	// Seeds, when non-nil (len NumEnvs), seed each copy at its first reset that gives no seed.
	Seeds     []int64
	Autoreset envs.AutoresetMode
	// Infos asks for the per-copy info dicts of reset and step (off by default: they cost time).
	Infos bool
	// Timeout bounds every call whose context has no deadline (0: 60 s). A reset or step that runs
	// out of time leaves the VecEnv in an unknown state (ErrStateUnknown) until a Reset of every copy.
	Timeout time.Duration
	// MaxReplyBytes caps replies before decoding (0: 256 MiB); spaces a batch of whose observations
	// would not fit in one are refused at make.
	MaxReplyBytes int
	// Keepalive is the period of background pings to servers that close the envs of a client idle
	// longer than their --idle-timeout: 0 pings every third of the server's timeout (none when it has
	// none), <0 never pings. A connection that carried a request within the period is not pinged.
	Keepalive time.Duration
}

// VecEnv is an envs.VecEnv whose copies live in one or more Python servers.
type VecEnv struct {
	cfg      Config
	shards   []*shard
	servers  []*Server // started by Start; stopped by Close
	obsSpace envs.Space
	actSpace envs.Space
	n        int
	obsSize  int
	actSize  int

	obs      envs.Array
	res      envs.StepResult
	actCheck *flatChecker // nil: check every action row with ReadRow + Space.Check
	closed   bool
	broken   error
	// unknown is set when a reset or step ended without its reply (see ErrStateUnknown) and cleared
	// by a Reset of every copy.
	unknown error
	// EnvSeconds is the time the servers spent inside env.reset/env.step during the last call
	// (summed over servers): what is left of the wall time is transport.
	EnvSeconds float64
	// ServerSeconds is the servers' whole share of the last reset or step (summed over servers):
	// EnvSeconds plus their decoding, checks and per-copy loop; the rest of the wall time is the
	// round trip. 0 from servers older than 0.3.0.
	ServerSeconds float64
	Hello         Hello

	stopKeepalive chan struct{} // closed by Close; nil when no keepalive runs
	keepaliveDone chan struct{}
	// delivered gets a token whenever a reply reaches any connection (see WaitAny).
	delivered chan struct{}
}

// shard is the copies [lo, hi) held by one env group on one server.
type shard struct {
	c      *transport.Conn
	handle int64
	lo, hi int
	idle   time.Duration // the server's idle timeout (0: none)
}

var _ envs.VecEnv = (*VecEnv)(nil)

// Start starts `servers` local server processes (at least 1), spreads cfg.NumEnvs copies over them
// and returns the VecEnv; Close stops the servers. Cancelling ctx kills them.
func Start(ctx context.Context, cfg Config, servers int, opts ServerOptions) (*VecEnv, error) {
	if servers < 1 {
		return nil, fmt.Errorf("bridge: need at least one server, got %d", servers)
	}
	started := make([]*Server, 0, servers)
	stopAll := func() {
		for _, s := range started {
			s.Close()
		}
	}
	type res struct {
		s   *Server
		err error
	}
	ch := make(chan res, servers)
	for range servers {
		go func() {
			s, err := StartServer(ctx, opts)
			ch <- res{s, err}
		}()
	}
	var firstErr error
	for range servers {
		r := <-ch
		if r.err != nil {
			firstErr = cmpErr(firstErr, r.err)
			continue
		}
		started = append(started, r.s)
	}
	if firstErr != nil {
		stopAll()
		return nil, firstErr
	}
	eps := make([]string, len(started))
	for i, s := range started {
		eps[i] = s.Endpoint
	}
	e, err := dial(ctx, cfg, eps, started)
	if err != nil {
		stopAll()
		return nil, err
	}
	e.servers = started
	return e, nil
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// Dial connects to running servers (e.g. tcp://127.0.0.1:5555) and spreads the copies over them.
func Dial(ctx context.Context, cfg Config, endpoints ...string) (*VecEnv, error) {
	if len(endpoints) == 0 {
		return nil, errors.New("bridge: no endpoints to dial")
	}
	return dial(ctx, cfg, endpoints, nil)
}

func dial(ctx context.Context, cfg Config, endpoints []string, servers []*Server) (*VecEnv, error) {
	if cfg.NumEnvs < 1 {
		return nil, fmt.Errorf("bridge: NumEnvs must be >= 1, got %d", cfg.NumEnvs)
	}
	if len(endpoints) > cfg.NumEnvs {
		return nil, fmt.Errorf("bridge: %d servers for %d copies", len(endpoints), cfg.NumEnvs)
	}
	if cfg.Seeds != nil && len(cfg.Seeds) != cfg.NumEnvs {
		return nil, fmt.Errorf("bridge: %d seeds for %d copies", len(cfg.Seeds), cfg.NumEnvs)
	}
	if cfg.Autoreset != envs.AutoresetNextStep && cfg.Autoreset != envs.AutoresetDisabled {
		return nil, fmt.Errorf("bridge: unsupported autoreset mode %v", cfg.Autoreset)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.MaxReplyBytes <= 0 {
		cfg.MaxReplyBytes = 256 << 20
	}
	ctx, cancel := transport.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	e := &VecEnv{cfg: cfg, n: cfg.NumEnvs, delivered: make(chan struct{}, 1)}
	fail := func(err error) (*VecEnv, error) {
		e.Close()
		return nil, err
	}
	for k, ep := range endpoints {
		c, err := transport.Dial(ctx, ep, cfg.MaxReplyBytes, e.delivered)
		if err != nil {
			return fail(err)
		}
		if servers != nil {
			s := servers[k]
			c.WatchPeer(s.Exited(), s.ExitErr)
		}
		lo, hi := k*cfg.NumEnvs/len(endpoints), (k+1)*cfg.NumEnvs/len(endpoints)
		e.shards = append(e.shards, &shard{c: c, lo: lo, hi: hi})
	}
	// hello, then make, on every server at once.
	hellos := make([]*transport.Pending, len(e.shards))
	for k, sh := range e.shards {
		p, err := send(ctx, sh.c, "hello", map[string]any{"op": "hello"})
		if err != nil {
			return fail(err)
		}
		hellos[k] = p
	}
	for k, p := range hellos {
		var h Hello
		if err := recv(ctx, p, &h); err != nil {
			return fail(err)
		}
		if err := checkProtocol(e.shards[k].c, h); err != nil {
			return fail(err)
		}
		e.Hello = h
		e.shards[k].idle = time.Duration(h.IdleTimeout * float64(time.Second))
	}
	makes := make([]*transport.Pending, len(e.shards))
	for k, sh := range e.shards {
		req := map[string]any{"op": "make", "env_id": cfg.EnvID, "kwargs": cfg.Kwargs, "num_envs": sh.hi - sh.lo,
			"autoreset": cfg.Autoreset.String(), "infos": cfg.Infos}
		if cfg.Seeds != nil {
			req["seeds"] = cfg.Seeds[sh.lo:sh.hi]
		}
		p, err := send(ctx, sh.c, "make", req)
		if err != nil {
			return fail(err)
		}
		makes[k] = p
	}
	var firstErr error
	for k, p := range makes {
		var r wire.MakeReply
		if err := recv(ctx, p, &r); err != nil {
			firstErr = cmpErr(firstErr, e.shiftCopy(err, e.shards[k]))
			continue
		}
		e.shards[k].handle = r.Handle
		obs, err := r.Obs.ToSpace()
		if err != nil {
			firstErr = cmpErr(firstErr, fmt.Errorf("bridge: observation space of %s: %w", cfg.EnvID, err))
			continue
		}
		act, err := r.Act.ToSpace()
		if err != nil {
			firstErr = cmpErr(firstErr, fmt.Errorf("bridge: action space of %s: %w", cfg.EnvID, err))
			continue
		}
		rows := e.shards[k].hi - e.shards[k].lo
		if err := wire.FitsReplies(obs, rows, cfg.MaxReplyBytes); err != nil {
			firstErr = cmpErr(firstErr, fmt.Errorf("bridge: observation space of %s: %w", cfg.EnvID, err))
			continue
		}
		if err := wire.FitsReplies(act, 1, cfg.MaxReplyBytes); err != nil { // actions go the other way: one row
			firstErr = cmpErr(firstErr, fmt.Errorf("bridge: action space of %s: %w", cfg.EnvID, err))
			continue
		}
		if e.obsSpace == nil {
			e.obsSpace, e.actSpace = obs, act
		} else if obs.String() != e.obsSpace.String() || act.String() != e.actSpace.String() {
			firstErr = cmpErr(firstErr, fmt.Errorf("bridge: servers disagree on the spaces of %s: %v %v vs %v %v", cfg.EnvID, obs, act, e.obsSpace, e.actSpace))
		}
	}
	if firstErr != nil {
		return fail(firstErr)
	}
	e.obsSize, e.actSize = e.obsSpace.FlatSize(), e.actSpace.FlatSize()
	if fc, ok := newFlatChecker(e.actSpace); ok {
		e.actCheck = fc
	}
	e.startKeepalive()
	e.obs = envs.NewBatch(e.obsSpace, e.n)
	e.res = envs.StepResult{Obs: envs.NewBatch(e.obsSpace, e.n), Rewards: make([]float64, e.n), Terminated: make([]bool, e.n), Truncated: make([]bool, e.n)}
	return e, nil
}

// shiftCopy turns a shard-local copy index in a remote error into a global one.
func (e *VecEnv) shiftCopy(err error, sh *shard) error {
	var re *RemoteError
	if errors.As(err, &re) {
		if re.Copy >= 0 {
			re.Copy += sh.lo
		}
		if re.Fatal {
			e.broken = err
		}
	}
	return err
}

func (e *VecEnv) NumEnvs() int                      { return e.n }
func (e *VecEnv) ObservationSpace() envs.Space      { return e.obsSpace }
func (e *VecEnv) ActionSpace() envs.Space           { return e.actSpace }
func (e *VecEnv) AutoresetMode() envs.AutoresetMode { return e.cfg.Autoreset }

// usable says whether a call may go ahead; fullReset: the call is a Reset of every copy, which is
// allowed (and the way out) when the state is unknown.
func (e *VecEnv) usable(fullReset bool) error {
	if e.closed {
		return ErrClosed
	}
	if e.broken != nil {
		return fmt.Errorf("bridge: env group unusable after an earlier fatal error: %w", e.broken)
	}
	if e.unknown != nil && !fullReset {
		return fmt.Errorf("%w (after: %w)", ErrStateUnknown, e.unknown)
	}
	return nil
}

// settle records what a reset or step request left behind that failed with err: a *RemoteError is
// an answer (the server says what it did: nothing, or the group is closed), anything else leaves the
// copies in an unknown state.
func (e *VecEnv) settle(err error) {
	var re *RemoteError
	if err != nil && !errors.As(err, &re) && e.unknown == nil {
		e.unknown = err
	}
}

// Reset implements envs.VecEnv.
func (e *VecEnv) Reset(ctx context.Context, req envs.ResetRequest) (envs.Array, []envs.Info, error) {
	if err := e.usable(req.Mask == nil); err != nil {
		return envs.Array{}, nil, err
	}
	for name, l := range map[string]int{"Seeds": len(req.Seeds), "Mask": len(req.Mask), "PerCopy": len(req.PerCopy)} {
		if l != 0 && l != e.n {
			return envs.Array{}, nil, fmt.Errorf("bridge: reset: %s has %d entries for %d copies", name, l, e.n)
		}
	}
	for i, s := range req.Seeds {
		if s < 0 {
			return envs.Array{}, nil, fmt.Errorf("bridge: reset: copy %d: negative seed %d", i, s)
		}
	}
	ctx, cancel := transport.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	type sent struct {
		sh *shard
		p  *transport.Pending
	}
	var all []sent
	for _, sh := range e.shards {
		r := map[string]any{"op": "reset", "handle": sh.handle}
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
				continue
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
		p, err := send(ctx, sh.c, "reset", r)
		if err != nil {
			for _, s := range all {
				s.p.Abandon()
			}
			e.settle(err)
			return envs.Array{}, nil, err
		}
		all = append(all, sent{sh, p})
	}
	var infos []envs.Info
	if e.cfg.Infos {
		infos = make([]envs.Info, e.n)
	}
	e.EnvSeconds, e.ServerSeconds = 0, 0
	var firstErr error
	for _, s := range all {
		var r wire.ResetReply
		if err := recv(ctx, s.p, &r); err != nil {
			e.settle(err)
			firstErr = cmpErr(firstErr, e.shiftCopy(err, s.sh))
			continue
		}
		if err := e.storeObs(e.obs, &r.Obs, s.sh.lo, s.sh.hi); err != nil {
			err = s.sh.c.Violation("reset", err)
			e.settle(err)
			firstErr = cmpErr(firstErr, err)
			continue
		}
		e.storeInfos(infos, r.Infos, s.sh.lo, s.sh.hi)
		e.EnvSeconds += r.EnvSeconds
		e.ServerSeconds += r.ServerSeconds
	}
	if firstErr != nil {
		return envs.Array{}, nil, firstErr
	}
	if req.Mask == nil {
		e.unknown = nil // every copy was reset: the state is known again
	}
	return e.obs, infos, nil
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

// Ping round-trips a no-op to every server.
func (e *VecEnv) Ping(ctx context.Context) error {
	ctx, cancel := transport.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	for _, sh := range e.shards {
		if err := call(ctx, sh.c, "ping", map[string]any{"op": "ping"}, nil); err != nil {
			return err
		}
	}
	return nil
}

// startKeepalive pings, in the background, every server whose idle timeout would otherwise close the
// envs of a client that is alive but busy elsewhere (e.g. training for minutes between steps).
func (e *VecEnv) startKeepalive() {
	period := e.cfg.Keepalive
	if period < 0 {
		return
	}
	if period == 0 {
		for _, sh := range e.shards {
			if sh.idle > 0 && (period == 0 || sh.idle/3 < period) {
				period = sh.idle / 3
			}
		}
		if period == 0 {
			return
		}
	}
	e.stopKeepalive, e.keepaliveDone = make(chan struct{}), make(chan struct{})
	go e.keepalive(period, e.stopKeepalive, e.keepaliveDone)
}

func (e *VecEnv) keepalive(period time.Duration, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		for _, sh := range e.shards {
			if time.Since(sh.c.LastSend()) < period {
				continue // a request went out recently: the server saw this client
			}
			ctx, cancel := context.WithTimeout(context.Background(), max(period, time.Second))
			p, err := send(ctx, sh.c, "ping", map[string]any{"op": "ping"})
			if err != nil {
				cancel()
				continue // the connection is gone; the next real call reports it
			}
			go func() {
				select {
				case <-stop:
					cancel()
				case <-ctx.Done():
				}
			}()
			_ = recv(ctx, p, nil) // best effort: a failure shows up on the next real call
			cancel()
		}
	}
}

// Close closes the remote env groups (best effort, 2 s), the connections and any servers Start started.
func (e *VecEnv) Close() error {
	if e.closed {
		return nil
	}
	e.closed = true
	if e.stopKeepalive != nil {
		close(e.stopKeepalive)
		<-e.keepaliveDone
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var firstErr error
	for _, sh := range e.shards {
		if sh.handle != 0 && e.broken == nil {
			if err := call(ctx, sh.c, "close", map[string]any{"op": "close", "handle": sh.handle}, nil); err != nil && !errors.Is(err, ErrConnectionLost) {
				firstErr = cmpErr(firstErr, err)
			}
		}
		sh.c.Close()
	}
	for _, s := range e.servers {
		s.Close()
	}
	if firstErr != nil && len(e.servers) == 0 {
		return fmt.Errorf("bridge: close: %w", firstErr)
	}
	return nil
}
