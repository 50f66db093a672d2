package transport

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

	"github.com/sparsepcl/sparsepcl/bridge/auth"
)

// Conn is one ZMTP connection to one server (see stream.go) with requests matched to replies by id:
// a request is [id, payload] and its reply [id, payload], the id 8 bytes little-endian.
//
// There is no reader goroutine: a call waiting for its reply reads the stream itself (leader and
// followers: one waiter at a time holds the read token and hands the replies it reads for others to
// their channels), so in lockstep the reply wakes the goroutine that wants it directly, without a
// hand-off between goroutines, which costs scheduler wake-ups that the Python servers pay for on a
// small machine. WaitAny, which must watch several connections at once, starts a pump per
// connection instead (see pump).
type Conn struct {
	endpoint string
	stream   *Stream
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

// ErrClosed is returned by calls on a closed connection.
var ErrClosed = errors.New("bridge: closed")

// ErrConnectionLost wraps failures of the transport (server died, socket closed under a call).
var ErrConnectionLost = errors.New("bridge: connection lost")

// ErrProtocol wraps replies that break the protocol: malformed msgpack, a message over the decoding
// limits (declared lengths beyond the frame, too many values, nesting too deep), a wrong schema. The
// connection they came on is closed (Violation).
var ErrProtocol = errors.New("bridge: protocol violation")

type reply struct {
	payload []byte
	err     error
}

// Dial connects to endpoint (ipc://PATH or tcp://HOST:PORT) within ctx, authenticating with ZeroMQ
// PLAIN and creds when creds is not nil (a refusal wraps ErrAuth). Replies longer than maxReply bytes
// are skipped and fail their call. notify, when not nil, gets a token (never blocking) whenever a
// reply or a failure is delivered.
func Dial(ctx context.Context, endpoint string, maxReply int, notify chan<- struct{}, creds *auth.Credentials) (*Conn, error) {
	stream, err := openStream(ctx, endpoint, creds)
	if err != nil {
		return nil, err
	}
	return &Conn{endpoint: endpoint, stream: stream, maxReply: maxReply, rtok: make(chan struct{}, 1),
		wait: map[uint64]chan reply{}, notify: notify}, nil
}

// Endpoint is the address the connection was dialled to.
func (c *Conn) Endpoint() string { return c.endpoint }

// WatchPeer tells the connection that the server is a process whose exit closes dead, and why
// describes that exit: a call then fails as soon as the process is gone, and a connection that hits
// end-of-stream reports how it ended. Call it before the first Send.
func (c *Conn) WatchPeer(dead <-chan struct{}, why func() error) { c.dead, c.deadFn = dead, why }

// LastSend is when the last request was sent (the zero time before any).
func (c *Conn) LastSend() time.Time {
	if ns := c.lastSend.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// readOne reads one message and hands it to its waiter; the read token must be held. ctx bounds
// only the wait for the message's first byte, so giving up leaves the stream intact; any other
// failure fails the connection.
func (c *Conn) readOne(ctx context.Context) error {
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
	m, err := c.stream.ReadMessage(c.maxReply)
	c.endRead()
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) && !c.closing.Load() && ctxOver(ctx) {
			<-ctx.Done()
			return c.lost(fmt.Errorf("a message was cut off mid-way when the call gave up: %w", context.Cause(ctx)))
		}
		return c.lost(err)
	}
	if len(m.Frames) != 2 || len(m.Frames[0]) != 8 {
		return nil // not a reply of ours
	}
	id := binary.LittleEndian.Uint64(m.Frames[0])
	c.mu.Lock()
	ch, ok := c.wait[id]
	delete(c.wait, id)
	c.mu.Unlock()
	if !ok {
		return nil // late reply to an abandoned call
	}
	if m.Oversized > 0 {
		ch <- reply{err: fmt.Errorf("bridge: reply of %d bytes from %s exceeds the cap of %d", m.Oversized, c.endpoint, c.maxReply)}
	} else {
		ch <- reply{payload: m.Frames[1]}
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
func (c *Conn) beginRead(ctx context.Context) error {
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
func (c *Conn) midMessage(ctx context.Context) {
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

func (c *Conn) endRead() {
	c.rdl.Lock()
	defer c.rdl.Unlock()
	c.readCtx = nil
}

// interrupt makes a reader on behalf of ctx give up (ctx was cancelled): at once while it waits for a
// message to begin, and by failing the connection in the middle of one.
func (c *Conn) interrupt(ctx context.Context) {
	c.rdl.Lock()
	defer c.rdl.Unlock()
	if c.readCtx == ctx {
		_ = c.stream.SetReadDeadline(time.Unix(1, 0))
	}
}

// lead reads messages, with the read token held, until done reports true or ctx ends.
func (c *Conn) lead(ctx context.Context, done func() bool) error {
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
func (c *Conn) lost(err error) error {
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

// Violation fails the connection after a reply that breaks the protocol (malformed, over the
// decoding limits), so that nothing else is read from a peer that cannot be trusted, and returns the
// error for the call that received it.
func (c *Conn) Violation(op string, err error) error {
	e := fmt.Errorf("%w: %s reply from %s: %w", ErrProtocol, op, c.endpoint, err)
	c.fail(e)
	c.stream.Close()
	return e
}

// ReadUntil reads the connection on behalf of every waiter until done reports true, or returns nil
// as soon as wake delivers while another goroutine holds the reading; it gives up when ctx ends.
func (c *Conn) ReadUntil(ctx context.Context, done func() bool, wake <-chan struct{}) error {
	select {
	case c.rtok <- struct{}{}:
		err := c.lead(ctx, done)
		<-c.rtok
		return err
	case <-wake:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// pump reads on behalf of others while anyone waits for a reply (WaitAny across connections).
func (c *Conn) pump() {
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

// EnsurePump starts a goroutine that reads the connection for as long as anyone waits for a reply,
// unless one runs already: for a caller that waits on several connections at once.
func (c *Conn) EnsurePump() {
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
func (c *Conn) poke() {
	if c.notify != nil {
		select {
		case c.notify <- struct{}{}:
		default:
		}
	}
}

// fail marks the connection unusable and fails every waiting call.
func (c *Conn) fail(err error) {
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

// Pending is a sent request whose reply has not been received yet.
type Pending struct {
	c  *Conn
	id uint64
	ch chan reply
	op string
}

// Conn is the connection the request went out on.
func (p *Pending) Conn() *Conn { return p.c }

// Op is the request's operation, as Send was given it (for error messages).
func (p *Pending) Op() string { return p.op }

// Send registers and sends one request, its payload already encoded, under a fresh id. The writing
// must end by deadline (zero: messageTimeout from now); a write that fails or times out fails the
// connection.
func (c *Conn) Send(deadline time.Time, op string, payload []byte) (*Pending, error) {
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.nextID++
	p := &Pending{c: c, id: c.nextID, ch: make(chan reply, 1), op: op}
	c.wait[p.id] = p.ch
	c.mu.Unlock()
	var idb [8]byte
	binary.LittleEndian.PutUint64(idb[:], p.id)
	now := time.Now()
	if deadline.IsZero() {
		deadline = now.Add(messageTimeout)
	}
	err := c.stream.WriteMessage(deadline, idb[:], payload)
	c.lastSend.Store(now.UnixNano())
	if err != nil {
		p.Abandon()
		// A message may be half written: the connection is out of step.
		return nil, fmt.Errorf("bridge: send %s: %w", op, c.lost(err))
	}
	return p, nil
}

// Arrived reports whether the reply (or the connection's failure) is there to be received.
func (p *Pending) Arrived() bool { return len(p.ch) > 0 }

// Abandon gives up on the reply: it is discarded when it comes.
func (p *Pending) Abandon() {
	p.c.mu.Lock()
	delete(p.c.wait, p.id)
	p.c.mu.Unlock()
}

// await returns the reply, reading the stream itself while nobody else does.
func (p *Pending) await(ctx context.Context) (reply, error) {
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
			err := c.lead(ctx, p.Arrived)
			<-c.rtok
			if err != nil && !p.Arrived() {
				p.Abandon()
				if ctx.Err() != nil {
					return reply{}, fmt.Errorf("bridge: %s on %s: %w", p.op, c.endpoint, context.Cause(ctx))
				}
				return reply{}, err
			}
		case <-ctx.Done():
			p.Abandon()
			return reply{}, fmt.Errorf("bridge: %s on %s: %w", p.op, c.endpoint, context.Cause(ctx))
		case <-c.dead:
			p.Abandon()
			return reply{}, fmt.Errorf("%w: %s on %s: %w", ErrConnectionLost, p.op, c.endpoint, c.deadFn())
		}
	}
}

// Await waits for the reply's payload, reading the connection itself while nobody else does; a failed
// connection, an oversized reply and the end of ctx are errors.
func (p *Pending) Await(ctx context.Context) ([]byte, error) {
	r, err := p.await(ctx)
	if err != nil {
		return nil, err
	}
	if r.err != nil {
		return nil, fmt.Errorf("bridge: %s: %w", p.op, r.err)
	}
	return r.payload, nil
}

// Close closes the connection, waits until nobody reads it and fails what is still waiting.
func (c *Conn) Close() {
	c.closing.Store(true)
	c.stream.Close()
	c.rtok <- struct{}{}
	c.fail(ErrClosed)
	<-c.rtok
}

// WithTimeout applies d when ctx has no deadline of its own; the deadline's cause says which timeout
// it was.
func WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
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
