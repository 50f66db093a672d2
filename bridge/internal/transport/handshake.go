package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/go-zeromq/zmq4"
)

// ErrAuth wraps a handshake that failed on authentication: the server refused the credentials, asks
// for credentials the client was not given, or takes none while the client has some.
var ErrAuth = errors.New("bridge: authentication failed")

// handshakeTimeout bounds the ZMTP greeting and security handshake when the caller's deadline is
// later or absent: a server that accepts the connection and then says nothing must not hold Dial.
const handshakeTimeout = messageTimeout

// recordMax is how much of what the server sends during the handshake is kept for handshakeErr:
// its greeting (64 bytes) and a command or two.
const recordMax = 512

// recordingConn keeps the first bytes the server sends, so that a failed handshake can say what the
// server answered (zmq4's errors do not carry it).
type recordingConn struct {
	*Stream
	rec []byte
}

func (r *recordingConn) Read(p []byte) (int, error) {
	n, err := r.Stream.Read(p)
	if room := recordMax - len(r.rec); room > 0 {
		r.rec = append(r.rec, p[:min(n, room)]...)
	}
	return n, err
}

// ZMTP 3 greeting layout: signature (10 bytes), version (2), mechanism (20, NUL-padded), as-server
// (1), filler (31).
const (
	greetingLen  = 64
	mechanismOff = 12
	mechanismLen = 20
)

// greetingPrefix is the start of a ZMTP 3 greeting up to the major version: enough for a libzmq
// peer to send the rest of its own, mechanism included.
var greetingPrefix = []byte{0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 3}

// handshakeErr explains a failed handshake from what the server sent (rec) and the mechanism the
// client offered (mech): a server that refused the credentials sends a ZMTP ERROR after the
// greeting, one whose mechanism differs from ours says which it wants in its greeting. libzmq checks
// the mechanism as soon as it has our greeting and may hang up before sending all of its own; then a
// second connection that sends only the start of a greeting learns the server's mechanism (probe).
func handshakeErr(ctx context.Context, network, addr string, mech zmq4.SecurityType, rec []byte, err error) error {
	peer := ""
	if len(rec) >= greetingLen {
		peer = string(bytes.TrimRight(rec[mechanismOff:mechanismOff+mechanismLen], "\x00"))
	} else if p, perr := probe(ctx, network, addr); perr == nil {
		peer = p
	}
	switch {
	case peer == string(zmq4.PlainSecurity) && mech == zmq4.NullSecurity:
		return fmt.Errorf("%w: the server requires credentials (ZeroMQ PLAIN) and none were given: pass --auth-file FILE or set SPARSEPCL_AUTH_FILE (bridge.Config.Credentials) to the server's credential file", ErrAuth)
	case peer == string(zmq4.NullSecurity) && mech == zmq4.PlainSecurity:
		return fmt.Errorf("%w: credentials were given but the server takes none (it runs without --auth-file): start it with the same --auth-file, or dial it without one", ErrAuth)
	case peer != "" && peer != string(mech):
		return fmt.Errorf("%w: the server speaks security mechanism %q; the bridge speaks NULL and PLAIN: %w", ErrAuth, peer, err)
	case peer == "" || len(rec) < greetingLen:
		return err
	}
	if code, ok := refusal(rec[greetingLen:]); ok && mech == zmq4.PlainSecurity {
		return fmt.Errorf("%w: the server refused the credentials%s: the user or password differs from those in the server's --auth-file", ErrAuth, code)
	}
	if mech == zmq4.PlainSecurity && errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: the server hung up during the PLAIN handshake, as one refusing the credentials does: %w", ErrAuth, err)
	}
	return err
}

// refusal reports whether the first frame in b, what the server answered our HELLO with, is a
// command other than WELCOME, and gives the status code it carries (" (ZMTP ERROR 400)"), if any.
// libzmq 4.3.5 answers a refused PLAIN HELLO with an ERROR command whose name is mangled (observed:
// "\x04\x09^RROR\x03400"), so the name is not relied on.
func refusal(b []byte) (string, bool) {
	if len(b) < 2 || b[0]&flagCommand == 0 || b[0]&flagLong != 0 {
		return "", false
	}
	size := int(b[1])
	if size > len(b)-2 {
		return "", false
	}
	body := b[2 : 2+size]
	if len(body) > 0 && int(body[0]) <= len(body)-1 && string(body[1:1+body[0]]) == zmq4.CmdWelcome {
		return "", false
	}
	if n := len(body); n >= 4 && body[n-4] == 3 && isDigits(body[n-3:]) {
		return fmt.Sprintf(" (ZMTP ERROR %s)", body[n-3:]), true
	}
	return "", true
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// probeTimeout bounds probe within the caller's deadline.
const probeTimeout = 2 * time.Second

// probe learns the security mechanism of the ZMTP server at addr: it sends the start of a greeting
// and reads the server's whole greeting, then hangs up.
func probe(ctx context.Context, network, addr string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	dl, _ := ctx.Deadline()
	_ = c.SetDeadline(dl)
	if _, err := c.Write(greetingPrefix); err != nil {
		return "", err
	}
	var g [greetingLen]byte
	if _, err := io.ReadFull(c, g[:]); err != nil {
		return "", err
	}
	if g[0] != 0xff || g[9] != 0x7f {
		return "", errors.New("not a ZMTP greeting")
	}
	return string(bytes.TrimRight(g[mechanismOff:mechanismOff+mechanismLen], "\x00")), nil
}
