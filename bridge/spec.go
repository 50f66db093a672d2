package bridge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sparsepcl/sparsepcl/bridge/internal/transport"
	"github.com/sparsepcl/sparsepcl/bridge/internal/wire"
)

// Spec is an env id's registration in the server's Gymnasium (gymnasium.spec), read without making
// the env. Nil fields are ones the id does not register.
type Spec = wire.Spec

// LookupSpec asks an env server for id's registration: the first of endpoints when any are given,
// else a server started with opts for the lookup and stopped after it. An id the server does not
// know is a *RemoteError of Type "UnknownEnv". Without a deadline on ctx the lookup gives up after
// 60 s.
func LookupSpec(ctx context.Context, id string, opts ServerOptions, endpoints ...string) (spec Spec, err error) {
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
		defer func() { err = errors.Join(err, srv.Close()) }()
		endpoint = srv.Endpoint
	}
	c, err := transport.Dial(ctx, endpoint, 1<<20, nil)
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
