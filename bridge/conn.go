package bridge

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// conn is one ZMTP connection to one server (see stream.go) with requests matched to replies by id.
//
// There is no reader goroutine: a call waiting for its reply reads the stream itself (leader and
// followers: one waiter at a time holds the read token and hands the replies it reads for others to
// their channels), so in lockstep the reply wakes the goroutine that wants it directly, without a
// hand-off between goroutines, which costs scheduler wake-ups that the Python servers pay for on a
// small machine. WaitAny, which must watch several connections at once, starts a pump per
// connection instead (see pump).
type conn struct {
	endpoint string
	stream   *streamConn
	maxReply int
	// dead, when non-nil, closes when the server is known to be gone (a process we started exited).
	dead   <-chan struct{}
	deadFn func() error

	lastSend atomic.Int64 // unix nanoseconds of the last request sent (keepalive skips busy connections)
	closing  atomic.Bool

	// rtok is held by whoever reads the stream.
	rtok chan struct{}
	// rdl orders read-deadline changes: a reader waiting for a message's first byte may be
	// interrupted, one in the middle of a message may not (the stream would lose its framing).
	rdl     sync.Mutex
	peekCtx context.Context // the context of the reader waiting for a first byte, if any

	mu      sync.Mutex
	nextID  uint64
	wait    map[uint64]chan reply
	err     error // set once: the connection is unusable
	pumping bool  // a pump goroutine is running (or about to)
	// notify, when non-nil, gets a token (never blocking) whenever a reply or failure is delivered:
	// VecEnv.WaitAny sleeps on it.
	notify chan<- struct{}
}

// messageTimeout bounds the reading of a message that has started to arrive: the server writes
// whole messages, so only a peer stopped mid-write gets there.
const messageTimeout = 30 * time.Second

type reply struct {
	payload []byte
	err     error
}

// wireReply is every reply: ok with a result, or a structured error.
type wireReply struct {
	OK     bool               `msgpack:"ok"`
	Result msgpack.RawMessage `msgpack:"result"`
	Error  *wireError         `msgpack:"error"`
}

// wireReplyInto decodes a reply with its result directly into Result's pointee.
type wireReplyInto struct {
	OK     bool       `msgpack:"ok"`
	Result any        `msgpack:"result"`
	Error  *wireError `msgpack:"error"`
}

type wireError struct {
	Type      string `msgpack:"type"`
	Message   string `msgpack:"message"`
	Traceback string `msgpack:"traceback"`
	Copy      int    `msgpack:"copy"`
	Fatal     bool   `msgpack:"fatal"`
}

func dialConn(ctx context.Context, endpoint string, maxReply int, notify chan<- struct{}) (*conn, error) {
	stream, err := openStream(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	return &conn{endpoint: endpoint, stream: stream, maxReply: maxReply, rtok: make(chan struct{}, 1),
		wait: map[uint64]chan reply{}, notify: notify}, nil
}

// readOne reads one message and hands it to its waiter; the read token must be held. ctx bounds
// only the wait for the message's first byte, so giving up leaves the stream intact; any other
// failure fails the connection.
func (c *conn) readOne(ctx context.Context) error {
	for {
		if err := c.beginPeek(ctx); err != nil {
			return err
		}
		_, err := c.stream.r.Peek(1)
		c.endPeek()
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) || c.closing.Load() {
			return c.lost(err)
		}
		// Nothing of a message was consumed: ctx's deadline or cancellation (whose Done may lag the
		// read deadline by a moment), or else an interrupt meant for an earlier reader.
		if dl, ok := ctx.Deadline(); (ok && !time.Now().Before(dl)) || ctx.Err() != nil {
			<-ctx.Done()
			return context.Cause(ctx)
		}
	}
	m, err := c.stream.readMessage(c.maxReply)
	if err != nil {
		return c.lost(err)
	}
	if len(m.frames) != 2 || len(m.frames[0]) != 8 {
		return nil // not a reply of ours
	}
	id := binary.LittleEndian.Uint64(m.frames[0])
	c.mu.Lock()
	ch, ok := c.wait[id]
	delete(c.wait, id)
	c.mu.Unlock()
	if !ok {
		return nil // late reply to an abandoned call
	}
	if m.oversized > 0 {
		ch <- reply{err: fmt.Errorf("bridge: reply of %d bytes from %s exceeds the cap of %d", m.oversized, c.endpoint, c.maxReply)}
	} else {
		ch <- reply{payload: m.frames[1]}
	}
	c.poke()
	return nil
}

func (c *conn) beginPeek(ctx context.Context) error {
	c.rdl.Lock()
	defer c.rdl.Unlock()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	c.peekCtx = ctx
	dl, _ := ctx.Deadline() // zero: none
	return c.stream.SetReadDeadline(dl)
}

func (c *conn) endPeek() {
	c.rdl.Lock()
	defer c.rdl.Unlock()
	c.peekCtx = nil
	_ = c.stream.SetReadDeadline(time.Now().Add(messageTimeout))
}

// interrupt makes a reader waiting for a first byte on behalf of ctx give up (ctx was cancelled).
func (c *conn) interrupt(ctx context.Context) {
	c.rdl.Lock()
	defer c.rdl.Unlock()
	if c.peekCtx == ctx {
		_ = c.stream.SetReadDeadline(time.Unix(1, 0))
	}
}

// lead reads messages, with the read token held, until done reports true or ctx ends.
func (c *conn) lead(ctx context.Context, done func() bool) error {
	stop := context.AfterFunc(ctx, func() { c.interrupt(ctx) })
	defer stop()
	for !done() {
		if err := c.readOne(ctx); err != nil {
			return err
		}
	}
	return nil
}

// lost fails the connection after a read error and returns the error it failed with.
func (c *conn) lost(err error) error {
	if c.closing.Load() {
		c.fail(ErrClosed)
	} else {
		c.fail(fmt.Errorf("%w: %s: %w", ErrConnectionLost, c.endpoint, err))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// pump reads on behalf of others while anyone waits for a reply (WaitAny across connections).
func (c *conn) pump() {
	c.rtok <- struct{}{}
	defer func() { <-c.rtok }()
	for {
		c.mu.Lock()
		if c.err != nil || len(c.wait) == 0 {
			c.pumping = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		if err := c.readOne(context.Background()); err != nil {
			c.mu.Lock()
			c.pumping = false
			c.mu.Unlock()
			return
		}
	}
}

// ensurePump starts a pump unless one is running or nobody waits.
func (c *conn) ensurePump() {
	c.mu.Lock()
	start := !c.pumping && c.err == nil && len(c.wait) > 0
	if start {
		c.pumping = true
	}
	c.mu.Unlock()
	if start {
		go c.pump()
	}
}

// poke tells a WaitAny, if any, that something was delivered.
func (c *conn) poke() {
	if c.notify != nil {
		select {
		case c.notify <- struct{}{}:
		default:
		}
	}
}

// fail marks the connection unusable and fails every waiting call.
func (c *conn) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
	}
	for id, ch := range c.wait {
		ch <- reply{err: c.err}
		delete(c.wait, id)
	}
	c.poke()
}

// pending is a sent request whose reply has not been received yet.
type pending struct {
	c  *conn
	id uint64
	ch chan reply
	op string
}

// send registers and sends one request.
func (c *conn) send(op string, req any) (*pending, error) {
	payload, err := msgpack.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("bridge: encode %s request: %w", op, err)
	}
	return c.sendEncoded(op, payload)
}

// sendEncoded registers and sends one request already encoded as msgpack.
func (c *conn) sendEncoded(op string, payload []byte) (*pending, error) {
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.nextID++
	p := &pending{c: c, id: c.nextID, ch: make(chan reply, 1), op: op}
	c.wait[p.id] = p.ch
	c.mu.Unlock()
	var idb [8]byte
	binary.LittleEndian.PutUint64(idb[:], p.id)
	err := c.stream.writeMessage(idb[:], payload)
	c.lastSend.Store(time.Now().UnixNano())
	if err != nil {
		p.abandon()
		return nil, fmt.Errorf("%w: send %s to %s: %w", ErrConnectionLost, op, c.endpoint, err)
	}
	return p, nil
}

// arrived reports whether the reply (or the connection's failure) is there to be received.
func (p *pending) arrived() bool { return len(p.ch) > 0 }

func (p *pending) abandon() {
	p.c.mu.Lock()
	delete(p.c.wait, p.id)
	p.c.mu.Unlock()
}

// await returns the reply, reading the stream itself while nobody else does.
func (p *pending) await(ctx context.Context) (reply, error) {
	c := p.c
	for {
		select {
		case r := <-p.ch:
			return r, nil
		default:
		}
		select {
		case r := <-p.ch:
			return r, nil
		case c.rtok <- struct{}{}:
			err := c.lead(ctx, p.arrived)
			<-c.rtok
			if err != nil && !p.arrived() {
				p.abandon()
				if ctx.Err() != nil {
					return reply{}, fmt.Errorf("bridge: %s on %s: %w", p.op, c.endpoint, context.Cause(ctx))
				}
				return reply{}, err
			}
		case <-ctx.Done():
			p.abandon()
			return reply{}, fmt.Errorf("bridge: %s on %s: %w", p.op, c.endpoint, context.Cause(ctx))
		case <-c.dead:
			p.abandon()
			return reply{}, fmt.Errorf("%w: %s on %s: %w", ErrConnectionLost, p.op, c.endpoint, c.deadFn())
		}
	}
}

// recv waits for the reply and decodes its result into out; a remote error becomes *RemoteError.
func (p *pending) recv(ctx context.Context, out any) error {
	payload, err := p.awaitPayload(ctx)
	if err != nil {
		return err
	}
	return p.decode(payload, out)
}

// recvStep is recv for a step reply, decoded by hand when it is a plain successful one.
func (p *pending) recvStep(ctx context.Context, out *stepReply) error {
	payload, err := p.awaitPayload(ctx)
	if err != nil {
		return err
	}
	if out.decodeFast(payload) {
		return nil
	}
	*out = stepReply{}
	return p.decode(payload, out)
}

// awaitPayload waits for the reply's payload; a failed connection or oversized reply is an error.
func (p *pending) awaitPayload(ctx context.Context) ([]byte, error) {
	r, err := p.await(ctx)
	if err != nil {
		return nil, err
	}
	if r.err != nil {
		return nil, fmt.Errorf("bridge: %s: %w", p.op, r.err)
	}
	return r.payload, nil
}

// decode decodes a reply's result into out; a remote error becomes *RemoteError.
func (p *pending) decode(payload []byte, out any) error {
	// One decoding pass: the result goes straight into out (a pointer held by the interface field).
	wr := wireReplyInto{Result: out}
	if out == nil {
		wr.Result = &msgpack.RawMessage{}
	}
	if err := msgpack.Unmarshal(payload, &wr); err != nil {
		return fmt.Errorf("bridge: decode %s reply from %s: %w", p.op, p.c.endpoint, err)
	}
	if !wr.OK {
		if wr.Error == nil {
			return fmt.Errorf("bridge: %s reply from %s is neither ok nor an error", p.op, p.c.endpoint)
		}
		e := wr.Error
		return &RemoteError{Op: p.op, Endpoint: p.c.endpoint, Type: e.Type, Message: e.Message, Traceback: e.Traceback, Copy: e.Copy, Fatal: e.Fatal}
	}
	return nil
}

// call sends one request and waits for its reply.
func (c *conn) call(ctx context.Context, op string, req, out any) error {
	p, err := c.send(op, req)
	if err != nil {
		return err
	}
	return p.recv(ctx, out)
}

// close closes the connection, waits until nobody reads it and fails what is still waiting.
func (c *conn) close() {
	c.closing.Store(true)
	c.stream.Close()
	c.rtok <- struct{}{}
	c.fail(ErrClosed)
	<-c.rtok
}

// Hello is the server's answer to hello.
type Hello struct {
	Protocol  int    `msgpack:"protocol"`
	Server    string `msgpack:"server"`
	Python    string `msgpack:"python"`
	Gymnasium string `msgpack:"gymnasium"`
	NumPy     string `msgpack:"numpy"`
	PyZMQ     string `msgpack:"pyzmq"`
	Msgpack   string `msgpack:"msgpack"`
	MuJoCo    string `msgpack:"mujoco"`
	// IdleTimeout is the server's --idle-timeout in seconds (0: never): VecEnv pings every third of it.
	IdleTimeout float64 `msgpack:"idle_timeout"`
}

func (c *conn) hello(ctx context.Context) (Hello, error) {
	var h Hello
	if err := c.call(ctx, "hello", map[string]any{"op": "hello"}, &h); err != nil {
		return h, err
	}
	if h.Protocol != ProtocolVersion {
		return h, fmt.Errorf("bridge: server %s speaks protocol %d, this client %d", c.endpoint, h.Protocol, ProtocolVersion)
	}
	return h, nil
}

// withDeadline applies d when ctx has no deadline of its own.
func withDeadline(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok || d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, d, callTimeout(d))
}

// callTimeout is the cause of a deadline set by Config.Timeout (formatted only when reported).
type callTimeout time.Duration

func (d callTimeout) Error() string {
	return fmt.Sprintf("bridge: call timeout %v: %v", time.Duration(d), context.DeadlineExceeded)
}

func (d callTimeout) Unwrap() error { return context.DeadlineExceeded }
