package bridge

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/vmihailenco/msgpack/v5"
)

// conn is one ZMTP connection to one server (see stream.go). A reader goroutine routes replies by
// request id to the calls waiting for them; replies to ids nobody waits for (timed out, cancelled) are
// dropped.
type conn struct {
	endpoint string
	stream   *streamConn
	zc       *zmq4.Conn
	maxReply int
	// dead, when non-nil, closes when the server is known to be gone (a process we started exited).
	dead   <-chan struct{}
	deadFn func() error

	lastSend atomic.Int64 // unix nanoseconds of the last request sent (keepalive skips busy connections)
	closing  atomic.Bool
	mu       sync.Mutex
	nextID   uint64
	wait     map[uint64]chan reply
	err      error // set once: the connection is unusable
	done     chan struct{}
	// notify, when non-nil, gets a token (never blocking) whenever a reply or failure is delivered:
	// VecEnv.WaitAny sleeps on it.
	notify chan<- struct{}
}

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
	stream, zc, err := openStream(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	c := &conn{endpoint: endpoint, stream: stream, zc: zc, maxReply: maxReply, wait: map[uint64]chan reply{}, done: make(chan struct{}), notify: notify}
	go c.read()
	return c, nil
}

func (c *conn) read() {
	defer close(c.done)
	for {
		msg, err := c.zc.RecvMsg()
		if err != nil {
			if c.closing.Load() {
				c.fail(ErrClosed)
			} else {
				c.fail(fmt.Errorf("%w: %s: %w", ErrConnectionLost, c.endpoint, err))
			}
			return
		}
		if len(msg.Frames) != 2 || len(msg.Frames[0]) != 8 {
			continue // a command, or not a reply of ours
		}
		id := binary.LittleEndian.Uint64(msg.Frames[0])
		c.mu.Lock()
		ch, ok := c.wait[id]
		delete(c.wait, id)
		c.mu.Unlock()
		if !ok {
			continue // late reply to an abandoned call
		}
		if len(msg.Frames[1]) > c.maxReply {
			ch <- reply{err: fmt.Errorf("bridge: reply of %d bytes from %s exceeds the cap of %d", len(msg.Frames[1]), c.endpoint, c.maxReply)}
		} else {
			ch <- reply{payload: msg.Frames[1]}
		}
		c.poke()
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
	err = c.stream.writeMessage(idb[:], payload)
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

// recv waits for the reply and decodes its result into out; a remote error becomes *RemoteError.
func (p *pending) recv(ctx context.Context, out any) error {
	var r reply
	select {
	case r = <-p.ch:
	case <-ctx.Done():
		p.abandon()
		return fmt.Errorf("bridge: %s on %s: %w", p.op, p.c.endpoint, ctx.Err())
	case <-p.c.dead:
		p.abandon()
		return fmt.Errorf("%w: %s on %s: %w", ErrConnectionLost, p.op, p.c.endpoint, p.c.deadFn())
	}
	if r.err != nil {
		return fmt.Errorf("bridge: %s: %w", p.op, r.err)
	}
	// One decoding pass: the result goes straight into out (a pointer held by the interface field).
	wr := wireReplyInto{Result: out}
	if out == nil {
		wr.Result = &msgpack.RawMessage{}
	}
	if err := msgpack.Unmarshal(r.payload, &wr); err != nil {
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

// close closes the connection and waits for the reader goroutine.
func (c *conn) close() {
	c.closing.Store(true)
	c.stream.Close()
	<-c.done
	c.fail(ErrClosed)
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
