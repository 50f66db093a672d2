package bridge

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/go-zeromq/zmq4/security/null"
)

// A connection is one ZMTP 3 stream to one server, with zmq4 doing the greeting, the NULL handshake
// and the reading of frames and commands. It is used directly rather than through a zmq4 DEALER
// socket because a socket costs, per message, a goroutine spawned for the send, two extra goroutine
// hand-offs on receive and one read syscall per frame header and body: measured, about half the
// client's CPU per step on 2 cores, CPU the Python servers need. A VecEnv talks to each server over
// exactly one connection, so the socket's queueing and round robin are not needed; the wire is the
// same (the servers see a DEALER peer).

// streamConn is the net.Conn under the ZMTP connection: reads are buffered (zmq4 reads each frame
// header and body with its own Read call) and writes are serialised, so a PONG zmq4 sends from the
// reader goroutine cannot land inside a message being written.
type streamConn struct {
	net.Conn
	r   *bufio.Reader
	wmu sync.Mutex
}

func newStreamConn(c net.Conn) *streamConn {
	return &streamConn{Conn: c, r: bufio.NewReaderSize(c, 64<<10)}
}

func (s *streamConn) Read(p []byte) (int, error) { return s.r.Read(p) }

func (s *streamConn) Write(p []byte) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.Conn.Write(p)
}

// writeMessage writes one ZMTP message (frames with the MORE flag on all but the last) with a single
// writev.
func (s *streamConn) writeMessage(frames ...[]byte) error {
	const more, long = 0x01, 0x02
	hdrs := make([]byte, 0, 9*len(frames))
	bufs := make(net.Buffers, 0, 2*len(frames))
	for i, f := range frames {
		start := len(hdrs)
		flag := byte(0)
		if i < len(frames)-1 {
			flag |= more
		}
		if len(f) > 255 {
			hdrs = append(hdrs, flag|long)
			hdrs = binary.BigEndian.AppendUint64(hdrs, uint64(len(f)))
		} else {
			hdrs = append(hdrs, flag, byte(len(f)))
		}
		bufs = append(bufs, hdrs[start:len(hdrs):len(hdrs)], f)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
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

// openStream dials endpoint and performs the ZMTP handshake as a DEALER, all within ctx.
func openStream(ctx context.Context, endpoint string) (*streamConn, *zmq4.Conn, error) {
	network, addr, err := splitEndpoint(endpoint)
	if err != nil {
		return nil, nil, err
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
			return nil, nil, fmt.Errorf("bridge: dial %s: %w", endpoint, err)
		}
		select {
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("bridge: dial %s: %w (last attempt: %v)", endpoint, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	// zmq4's handshake blocks on reads: bound it by the caller's deadline, or by a close on cancel.
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	sc := newStreamConn(nc)
	zc, err := zmq4.Open(sc, null.Security(), zmq4.Dealer, zmq4.SocketIdentity(""), false, nil)
	if !stop() || err != nil {
		nc.Close()
		if err == nil {
			err = ctx.Err()
		}
		return nil, nil, fmt.Errorf("bridge: handshake with %s: %w", endpoint, err)
	}
	_ = nc.SetDeadline(time.Time{})
	return sc, zc, nil
}
