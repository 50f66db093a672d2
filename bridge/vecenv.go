package bridge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sparsepcl/sparsepcl/bridge/auth"
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
	// Credentials, when not nil, authenticate Dial to every server with ZeroMQ PLAIN (servers run
	// with the same --auth-file); nil dials without. A refused or missing credential fails Dial with
	// ErrAuth, naming the endpoint and the cause. Start ignores it: its servers take the credentials
	// of ServerOptions.AuthFile, if any.
	Credentials *auth.Credentials
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
	creds, err := serverCredentials(opts)
	if err != nil {
		return nil, err
	}
	cfg.Credentials = creds
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
	cfg, err := cfg.checked(len(endpoints))
	if err != nil {
		return nil, err
	}
	ctx, cancel := transport.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	e := &VecEnv{cfg: cfg, n: cfg.NumEnvs, delivered: make(chan struct{}, 1)}
	fail := func(err error) (*VecEnv, error) {
		e.Close()
		return nil, err
	}
	for k, ep := range endpoints {
		c, err := transport.Dial(ctx, ep, cfg.MaxReplyBytes, e.delivered, cfg.Credentials)
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
	if err := e.hello(ctx); err != nil {
		return fail(err)
	}
	if err := e.makeEnvs(ctx); err != nil {
		return fail(err)
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

// checked is cfg checked for a VecEnv over servers servers, with the default timeout and reply
// size where it sets none.
func (cfg Config) checked(servers int) (Config, error) {
	if cfg.NumEnvs < 1 {
		return cfg, fmt.Errorf("bridge: NumEnvs must be >= 1, got %d", cfg.NumEnvs)
	}
	if servers > cfg.NumEnvs {
		return cfg, fmt.Errorf("bridge: %d servers for %d copies", servers, cfg.NumEnvs)
	}
	if cfg.Seeds != nil && len(cfg.Seeds) != cfg.NumEnvs {
		return cfg, fmt.Errorf("bridge: %d seeds for %d copies", len(cfg.Seeds), cfg.NumEnvs)
	}
	if cfg.Autoreset != envs.AutoresetNextStep && cfg.Autoreset != envs.AutoresetDisabled {
		return cfg, fmt.Errorf("bridge: unsupported autoreset mode %v", cfg.Autoreset)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.MaxReplyBytes <= 0 {
		cfg.MaxReplyBytes = 256 << 20
	}
	return cfg, nil
}

// hello greets every server at once and checks its protocol version.
func (e *VecEnv) hello(ctx context.Context) error {
	hellos := make([]*transport.Pending, len(e.shards))
	for k, sh := range e.shards {
		p, err := send(ctx, sh.c, "hello", map[string]any{"op": "hello"})
		if err != nil {
			return err
		}
		hellos[k] = p
	}
	for k, p := range hellos {
		var h Hello
		if err := recv(ctx, p, &h); err != nil {
			return err
		}
		if err := checkProtocol(e.shards[k].c, h); err != nil {
			return err
		}
		e.Hello = h
		e.shards[k].idle = time.Duration(h.IdleTimeout * float64(time.Second))
	}
	return nil
}

// makeEnvs makes each server's copies at once and takes the spaces, which every server must
// agree on and whose replies must fit the reply size.
func (e *VecEnv) makeEnvs(ctx context.Context) error {
	cfg := e.cfg
	makes := make([]*transport.Pending, len(e.shards))
	for k, sh := range e.shards {
		req := map[string]any{"op": "make", "env_id": cfg.EnvID, "kwargs": cfg.Kwargs, "num_envs": sh.hi - sh.lo,
			"autoreset": cfg.Autoreset.String(), "infos": cfg.Infos}
		if cfg.Seeds != nil {
			req["seeds"] = cfg.Seeds[sh.lo:sh.hi]
		}
		p, err := send(ctx, sh.c, "make", req)
		if err != nil {
			return err
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
		firstErr = cmpErr(firstErr, e.takeSpaces(r, e.shards[k].hi-e.shards[k].lo))
	}
	return firstErr
}

// takeSpaces checks the spaces of one server's make reply for its rows copies and keeps them
// (the first server's) or checks them against those kept.
func (e *VecEnv) takeSpaces(r wire.MakeReply, rows int) error {
	id, maxBytes := e.cfg.EnvID, e.cfg.MaxReplyBytes
	obs, err := r.Obs.ToSpace()
	if err != nil {
		return fmt.Errorf("bridge: observation space of %s: %w", id, err)
	}
	act, err := r.Act.ToSpace()
	if err != nil {
		return fmt.Errorf("bridge: action space of %s: %w", id, err)
	}
	if err := wire.FitsReplies(obs, rows, maxBytes); err != nil {
		return fmt.Errorf("bridge: observation space of %s: %w", id, err)
	}
	if err := wire.FitsReplies(act, 1, maxBytes); err != nil { // actions go the other way: one row
		return fmt.Errorf("bridge: action space of %s: %w", id, err)
	}
	if e.obsSpace == nil {
		e.obsSpace, e.actSpace = obs, act
	} else if obs.String() != e.obsSpace.String() || act.String() != e.actSpace.String() {
		return fmt.Errorf("bridge: servers disagree on the spaces of %s: %v %v vs %v %v", id, obs, act, e.obsSpace, e.actSpace)
	}
	return nil
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
