package bridge

import (
	"context"
	"fmt"
	"time"

	"github.com/sparsepcl/sparsepcl/bridge/auth"
	"github.com/sparsepcl/sparsepcl/bridge/internal/transport"
	"github.com/sparsepcl/sparsepcl/bridge/internal/wire"
)

// ProtocolVersion is the version of PROTOCOL.md this client speaks; hello and the ready handshake
// check it.
const ProtocolVersion = wire.ProtocolVersion

// Hello is the server's answer to hello: its protocol version, the versions of its libraries and
// its idle timeout.
type Hello = wire.Hello

// The calls of the protocol over a transport connection: a request encoded, sent and its reply
// decoded, a remote error turned into *RemoteError and a malformed reply into a failed connection.

// send encodes and sends one request; ctx's deadline bounds the writing.
func send(ctx context.Context, c *transport.Conn, op string, req any) (*transport.Pending, error) {
	payload, err := wire.EncodeRequest(req)
	if err != nil {
		return nil, fmt.Errorf("bridge: encode %s request: %w", op, err)
	}
	dl, _ := ctx.Deadline()
	return c.Send(dl, op, payload)
}

// recv waits for the reply and decodes its result into out (nil: not kept); a remote error becomes
// *RemoteError, a malformed reply fails the connection.
func recv(ctx context.Context, p *transport.Pending, out any) error {
	payload, err := p.Await(ctx)
	if err != nil {
		return err
	}
	e, err := wire.DecodeReply(payload, out)
	if err != nil {
		return p.Conn().Violation(p.Op(), err)
	}
	if e != nil {
		return &RemoteError{Op: p.Op(), Endpoint: p.Conn().Endpoint(), Type: e.Type, Message: e.Message, Traceback: e.Traceback, Copy: e.Copy, Fatal: e.Fatal}
	}
	return nil
}

// call sends one request and waits for its reply.
func call(ctx context.Context, c *transport.Conn, op string, req, out any) error {
	p, err := send(ctx, c, op, req)
	if err != nil {
		return err
	}
	return recv(ctx, p, out)
}

// hello asks the server for its versions and checks that it speaks ProtocolVersion.
func hello(ctx context.Context, c *transport.Conn) (Hello, error) {
	var h Hello
	if err := call(ctx, c, "hello", map[string]any{"op": "hello"}, &h); err != nil {
		return h, err
	}
	return h, checkProtocol(c, h)
}

// checkProtocol refuses a server that speaks another protocol version.
func checkProtocol(c *transport.Conn, h Hello) error {
	if h.Protocol != ProtocolVersion {
		return fmt.Errorf("bridge: server %s speaks protocol %d, this client %d", c.Endpoint(), h.Protocol, ProtocolVersion)
	}
	return nil
}

// Spec is an env id's registration in the server's Gymnasium (gymnasium.spec), read without making
// the env. Nil fields are ones the id does not register.
type Spec = wire.Spec

// LookupSpec asks an env server for id's registration: the first of endpoints when any are given
// (dialled with creds, as Config.Credentials), else a server started with opts for the lookup and
// stopped after it. An id the server does not know is a *RemoteError of Type "UnknownEnv". Without a
// deadline on ctx the lookup gives up after 60 s.
func LookupSpec(ctx context.Context, id string, opts ServerOptions, creds *auth.Credentials, endpoints ...string) (spec Spec, err error) {
	ctx, cancel := transport.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	endpoint := ""
	var srv *Server
	if len(endpoints) > 0 {
		endpoint = endpoints[0]
	} else {
		if srv, err = StartServer(ctx, opts); err != nil {
			return Spec{}, err
		}
		defer srv.Close() // it reports nothing: a server that will not stop is killed
		endpoint = srv.Endpoint
		if creds, err = serverCredentials(opts); err != nil {
			return Spec{}, err
		}
	}
	c, err := transport.Dial(ctx, endpoint, 1<<20, nil, creds)
	if err != nil {
		return Spec{}, err
	}
	defer c.Close()
	if srv != nil {
		c.WatchPeer(srv.Exited(), srv.ExitErr)
	}
	if _, err := hello(ctx, c); err != nil {
		return Spec{}, err
	}
	if err := call(ctx, c, "spec", map[string]any{"op": "spec", "env_id": id}, &spec); err != nil {
		return Spec{}, fmt.Errorf("bridge: spec of %s on %s: %w", id, endpoint, err)
	}
	return spec, nil
}
