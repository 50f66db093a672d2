package transport

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/go-zeromq/zmq4/security/null"
	"github.com/go-zeromq/zmq4/security/plain"

	"github.com/sparsepcl/sparsepcl/bridge/auth"
)

// A connection is one ZMTP 3 stream to one server: zmq4 does the greeting and the NULL handshake,
// and messages are then framed here, both ways. It is used directly rather than through a zmq4
// DEALER socket because a socket costs, per message, a goroutine spawned for the send, two extra
// goroutine hand-offs on receive and one read syscall per frame header and body: measured, about
// half the client's CPU per step on 2 cores, CPU the Python servers need. A VecEnv talks to each
// server over exactly one connection, so the socket's queueing and round robin are not needed; the
// wire is the same (the servers see a DEALER peer).

// Stream is the net.Conn under the ZMTP connection: reads are buffered (one syscall brings in
// many frames) and writes are serialised, so a PONG sent by a reader cannot land inside a message
// being written.
type Stream struct {
	net.Conn
	r   *bufio.Reader
	wmu sync.Mutex
}

// NewStream wraps c, on which the ZMTP handshake is still to be done (zmq4.Open does it).
func NewStream(c net.Conn) *Stream {
	return &Stream{Conn: c, r: bufio.NewReaderSize(c, 64<<10)}
}

func (s *Stream) Read(p []byte) (int, error) { return s.r.Read(p) }

func (s *Stream) Write(p []byte) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.Conn.Write(p)
}

// ZMTP 3 frame flags.
const (
	flagMore    = 0x01
	flagLong    = 0x02
	flagCommand = 0x04
)

// WriteMessage writes one ZMTP message (frames with the MORE flag on all but the last) with a single
// writev, which must end by deadline.
func (s *Stream) WriteMessage(deadline time.Time, frames ...[]byte) error {
	hdrs := make([]byte, 0, 9*len(frames))
	bufs := make(net.Buffers, 0, 2*len(frames))
	for i, f := range frames {
		start := len(hdrs)
		flag := byte(0)
		if i < len(frames)-1 {
			flag |= flagMore
		}
		if len(f) > 255 {
			hdrs = append(hdrs, flag|flagLong)
			hdrs = binary.BigEndian.AppendUint64(hdrs, uint64(len(f)))
		} else {
			hdrs = append(hdrs, flag, byte(len(f)))
		}
		bufs = append(bufs, hdrs[start:len(hdrs):len(hdrs)], f)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.Conn.SetWriteDeadline(deadline); err != nil {
		return err
	}
	_, err := bufs.WriteTo(s.Conn)
	return err
}

// Message is one ZMTP message as read by ReadMessage.
type Message struct {
	Frames [][]byte
	// Oversized is the length of a frame that was longer than the reader's limit (0: none); that
	// frame was skipped and is nil in frames.
	Oversized uint64
}

// ReadMessage reads one ZMTP message. A frame longer than limit is skipped without being stored (a
// length read off the wire never sizes an allocation beyond limit) and reported in oversized, so the
// stream stays in step. Commands are handled here: PING is answered with PONG, ERROR ends the
// stream, others are ignored.
func (s *Stream) ReadMessage(limit int) (Message, error) {
	var m Message
	for {
		flags, err := s.r.ReadByte()
		if err != nil {
			return m, err
		}
		var size uint64
		if flags&flagLong != 0 {
			var b [8]byte
			if _, err := io.ReadFull(s.r, b[:]); err != nil {
				return m, err
			}
			size = binary.BigEndian.Uint64(b[:])
		} else {
			b, err := s.r.ReadByte()
			if err != nil {
				return m, err
			}
			size = uint64(b)
		}
		if size > uint64(limit) {
			if flags&flagCommand != 0 || size > math.MaxInt64 {
				return m, fmt.Errorf("refusing a ZMTP frame of %d bytes (flags %#x)", size, flags)
			}
			if _, err := s.r.Discard(int(size)); err != nil {
				return m, err
			}
			m.Oversized = size
			m.Frames = append(m.Frames, nil)
		} else {
			body := make([]byte, size)
			if _, err := io.ReadFull(s.r, body); err != nil {
				return m, err
			}
			if flags&flagCommand != 0 {
				if err := s.command(body); err != nil {
					return m, err
				}
				continue
			}
			m.Frames = append(m.Frames, body)
		}
		if flags&flagMore == 0 {
			return m, nil
		}
	}
}

// command handles a ZMTP command frame: a name (length-prefixed) and its data.
func (s *Stream) command(body []byte) error {
	if len(body) == 0 || int(body[0]) > len(body)-1 {
		return fmt.Errorf("malformed ZMTP command of %d bytes", len(body))
	}
	name, data := string(body[1:1+body[0]]), body[1+body[0]:]
	switch name {
	case "PING": // heartbeat (ZMTP 3.1): answer PONG with the ping's context
		if len(data) < 2 {
			return errors.New("malformed ZMTP PING")
		}
		pong := append([]byte{4, 'P', 'O', 'N', 'G'}, data[2:]...)
		return s.writeCommand(pong)
	case "ERROR":
		reason := ""
		if len(data) > 0 && int(data[0]) <= len(data)-1 {
			reason = string(data[1 : 1+data[0]])
		}
		return fmt.Errorf("peer sent ZMTP ERROR %q", reason)
	}
	return nil
}

// writeCommand writes one command frame.
func (s *Stream) writeCommand(body []byte) error {
	var hdr []byte
	if len(body) > 255 {
		hdr = binary.BigEndian.AppendUint64([]byte{flagCommand | flagLong}, uint64(len(body)))
	} else {
		hdr = []byte{flagCommand, byte(len(body))}
	}
	bufs := net.Buffers{hdr, body}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.Conn.SetWriteDeadline(time.Now().Add(messageTimeout)); err != nil {
		return err
	}
	_, err := bufs.WriteTo(s.Conn)
	return err
}

// splitEndpoint maps a ZeroMQ endpoint to a Go network and address.
func splitEndpoint(endpoint string) (network, addr string, err error) {
	scheme, rest, ok := strings.Cut(endpoint, "://")
	switch {
	case !ok || rest == "":
	case scheme == "ipc":
		return "unix", rest, nil
	case scheme == "tcp":
		return "tcp", rest, nil
	}
	return "", "", fmt.Errorf("bridge: endpoint %q: want ipc://PATH or tcp://HOST:PORT", endpoint)
}

// dialRetry is how long dialing keeps retrying a server that is not listening yet (it may still be
// starting), within the caller's deadline.
const dialRetry = 2 * time.Second

// openStream dials endpoint and performs the ZMTP handshake as a DEALER, all within ctx: with PLAIN
// and creds when creds is not nil, else with NULL. A handshake the server refuses fails with ErrAuth
// and says why (see handshakeErr).
func openStream(ctx context.Context, endpoint string, creds *auth.Credentials) (*Stream, error) {
	network, addr, err := splitEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	giveUp := time.Now().Add(dialRetry)
	var nc net.Conn
	for {
		nc, err = d.DialContext(ctx, network, addr)
		if err == nil {
			break
		}
		notYet := errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
		if !notYet || time.Now().After(giveUp) {
			return nil, fmt.Errorf("bridge: dial %s: %w", endpoint, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("bridge: dial %s: %w (last attempt: %v)", endpoint, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	// zmq4's handshake blocks on reads: bound it by the caller's deadline (and handshakeTimeout), or
	// by a close on cancel.
	dl := time.Now().Add(handshakeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	_ = nc.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	sc := NewStream(nc)
	sec, mech := null.Security(), zmq4.NullSecurity
	if creds != nil {
		sec, mech = plain.Security(creds.User, creds.Password), zmq4.PlainSecurity
	}
	rc := &recordingConn{Stream: sc}
	_, err = zmq4.Open(rc, sec, zmq4.Dealer, zmq4.SocketIdentity(""), false, nil)
	if !stop() || err != nil {
		nc.Close()
		switch {
		case ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded): // cancelled
			return nil, fmt.Errorf("bridge: handshake with %s: %w", endpoint, ctx.Err())
		case ctx.Err() != nil: // the caller's deadline: its read timed out, or the stop closed the connection
			return nil, fmt.Errorf("bridge: handshake with %s: no complete answer in time (is a sparsepcl env server listening there?): %w", endpoint, ctx.Err())
		case errors.Is(err, os.ErrDeadlineExceeded): // handshakeTimeout
			return nil, fmt.Errorf("bridge: handshake with %s: no complete answer in time (is a sparsepcl env server listening there?): %w", endpoint, err)
		}
		return nil, fmt.Errorf("bridge: handshake with %s: %w", endpoint, handshakeErr(ctx, network, addr, mech, rc.rec, err))
	}
	_ = nc.SetDeadline(time.Time{})
	return sc, nil
}
