package bridge

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
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
	// rdl orders read-deadline changes. A reader waiting for a message's first byte may be
	// interrupted and the stream stays intact; one in the middle of a message is cut off only by its
	// call's deadline or cancellation (or messageTimeout), and that fails the connection, whose
	// framing is then lost.
	rdl     sync.Mutex
	readCtx context.Context // the context of the reader, if any

	mu      sync.Mutex
	nextID  uint64
	wait    map[uint64]chan reply
	err     error // set once: the connection is unusable
	pumping bool  // a pump goroutine is running (or about to)
	// notify, when non-nil, gets a token (never blocking) whenever a reply or failure is delivered:
	// VecEnv.WaitAny sleeps on it.
	notify chan<- struct{}
}

// messageTimeout bounds the reading of a message that has started to arrive, and the writing of one,
// when no call's deadline is shorter: the server writes whole messages, so only a peer stopped
// mid-write (or not reading) gets there.
const messageTimeout = 30 * time.Second

// deathGrace is how long a connection that hit end-of-stream waits for the server process it
// belongs to (one Start started) to exit, so that the error carries the process's exit status and
// the last lines of its stderr rather than a bare EOF.
const deathGrace = 2 * time.Second

type reply struct {
	payload []byte
	err     error
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
		if err := c.beginRead(ctx); err != nil {
			return err
		}
		_, err := c.stream.r.Peek(1)
		if err == nil {
			break
		}
		c.endRead()
		if !errors.Is(err, os.ErrDeadlineExceeded) || c.closing.Load() {
			return c.lost(err)
		}
		// Nothing of a message was consumed: ctx's deadline or cancellation (whose Done may lag the
		// read deadline by a moment), or else an interrupt meant for an earlier reader.
		if ctxOver(ctx) {
			<-ctx.Done()
			return context.Cause(ctx)
		}
	}
	// A message has begun: the rest of it must come by the same deadline (a peer that sends half a
	// reply and stalls must not hold the call), and a cut-off message fails the connection.
	c.midMessage(ctx)
	m, err := c.stream.readMessage(c.maxReply)
	c.endRead()
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) && !c.closing.Load() && ctxOver(ctx) {
			<-ctx.Done()
			return c.lost(fmt.Errorf("a message was cut off mid-way when the call gave up: %w", context.Cause(ctx)))
		}
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

// ctxOver reports whether ctx is done or its deadline has passed (Done may lag the deadline).
func ctxOver(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return (ok && !time.Now().Before(dl)) || ctx.Err() != nil
}

// beginRead starts a read on behalf of ctx: the wait for a message's first byte ends at ctx's deadline.
func (c *conn) beginRead(ctx context.Context) error {
	c.rdl.Lock()
	defer c.rdl.Unlock()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	c.readCtx = ctx
	dl, _ := ctx.Deadline() // zero: none
	return c.stream.SetReadDeadline(dl)
}

// midMessage bounds the rest of a message that has begun by ctx's deadline and messageTimeout.
func (c *conn) midMessage(ctx context.Context) {
	c.rdl.Lock()
	defer c.rdl.Unlock()
	dl := time.Now().Add(messageTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	if ctx.Err() != nil {
		dl = time.Unix(1, 0)
	}
	_ = c.stream.SetReadDeadline(dl)
}

func (c *conn) endRead() {
	c.rdl.Lock()
	defer c.rdl.Unlock()
	c.readCtx = nil
}

// interrupt makes a reader on behalf of ctx give up (ctx was cancelled): at once while it waits for a
// message to begin, and by failing the connection in the middle of one.
func (c *conn) interrupt(ctx context.Context) {
	c.rdl.Lock()
	defer c.rdl.Unlock()
	if c.readCtx == ctx {
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

// lost fails the connection after a read or write error and returns the error it failed with. When
// the peer hung up and is a process Start started, the error says how the process ended, with the
// last lines of its stderr.
func (c *conn) lost(err error) error {
	if c.closing.Load() {
		c.fail(ErrClosed)
	} else {
		if c.dead != nil && peerGone(err) {
			select {
			case <-c.dead:
				err = fmt.Errorf("%w; %w", err, c.deadFn())
			case <-time.After(deathGrace):
			}
		}
		c.fail(fmt.Errorf("%w: %s: %w", ErrConnectionLost, c.endpoint, err))
	}
	c.stream.Close() // whatever is left of the stream cannot be trusted to be in step
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// peerGone reports whether a stream error means the other end closed or reset the connection.
func peerGone(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// violation fails the connection after a reply that breaks the protocol (malformed, over the
// decoding limits), so that nothing else is read from a peer that cannot be trusted, and returns the
// error for the call that received it.
func (c *conn) violation(op string, err error) error {
	e := fmt.Errorf("%w: %s reply from %s: %w", ErrProtocol, op, c.endpoint, err)
	c.fail(e)
	c.stream.Close()
	return e
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

// send registers and sends one request; ctx's deadline (or messageTimeout) bounds the writing.
func (c *conn) send(ctx context.Context, op string, req any) (*pending, error) {
	payload, err := msgpack.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("bridge: encode %s request: %w", op, err)
	}
	dl, _ := ctx.Deadline()
	return c.sendEncoded(dl, op, payload)
}

// sendEncoded registers and sends one request already encoded as msgpack. The writing must end by
// deadline (zero: messageTimeout from now); a write that fails or times out fails the connection.
func (c *conn) sendEncoded(deadline time.Time, op string, payload []byte) (*pending, error) {
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
	now := time.Now()
	if deadline.IsZero() {
		deadline = now.Add(messageTimeout)
	}
	err := c.stream.writeMessage(deadline, idb[:], payload)
	c.lastSend.Store(now.UnixNano())
	if err != nil {
		p.abandon()
		// A message may be half written: the connection is out of step.
		return nil, fmt.Errorf("bridge: send %s: %w", op, c.lost(err))
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

// decode decodes a reply's result into out; a remote error becomes *RemoteError, a malformed reply
// fails the connection.
func (p *pending) decode(payload []byte, out any) error {
	e, err := decodeReply(payload, out)
	if err != nil {
		return p.c.violation(p.op, err)
	}
	if e != nil {
		return &RemoteError{Op: p.op, Endpoint: p.c.endpoint, Type: e.Type, Message: e.Message, Traceback: e.Traceback, Copy: e.Copy, Fatal: e.Fatal}
	}
	return nil
}

// decodeReply is the one decoding of every reply payload: its result into out (nil: not kept), or
// the error it carries; err reports a malformed reply. A step reply that is a plain success takes
// the hand-written decoder (stepwire.go); everything else, a step reply with infos or an error
// included, goes through decodeGeneric.
func decodeReply(payload []byte, out any) (remote *wireError, err error) {
	if sr, ok := out.(*stepReply); ok {
		if sr.decodeFast(payload) {
			return nil, nil
		}
		*sr = stepReply{}
	}
	return decodeGeneric(payload, out)
}

// decodeGeneric decodes a reply payload with msgpack's reflection, within the limits of scanReply.
func decodeGeneric(payload []byte, out any) (remote *wireError, err error) {
	// The limits first: the reflection decoder trusts the lengths a message declares.
	if err := scanReply(payload); err != nil {
		return nil, err
	}
	// One decoding pass: the result goes straight into out (a pointer held by the interface field).
	wr := wireReplyInto{Result: out}
	if out == nil {
		wr.Result = &msgpack.RawMessage{}
	}
	if err := unmarshal(payload, &wr); err != nil {
		return nil, err
	}
	if !wr.OK {
		if wr.Error == nil {
			return nil, errors.New("neither ok nor an error")
		}
		return wr.Error, nil
	}
	return nil, nil
}

// unmarshal is msgpack.Unmarshal with its panics turned into errors: decoding a nil into the
// interface field that holds the result's pointer ({"result": nil}, found by FuzzReplyDecode) makes
// it panic in reflect, and a reply must never bring the process down.
func unmarshal(b []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("msgpack decoder panicked: %v", r)
		}
	}()
	return msgpack.Unmarshal(b, v)
}

// call sends one request and waits for its reply.
func (c *conn) call(ctx context.Context, op string, req, out any) error {
	p, err := c.send(ctx, op, req)
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
