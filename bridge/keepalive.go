package bridge

import (
	"context"
	"time"

	"github.com/sparsepcl/sparsepcl/bridge/internal/transport"
)

// Ping round-trips a no-op to every server.
func (e *VecEnv) Ping(ctx context.Context) error {
	ctx, cancel := transport.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	for _, sh := range e.shards {
		if err := call(ctx, sh.c, "ping", map[string]any{"op": "ping"}, nil); err != nil {
			return err
		}
	}
	return nil
}

// startKeepalive pings, in the background, every server whose idle timeout would otherwise close the
// envs of a client that is alive but busy elsewhere (e.g. training for minutes between steps).
func (e *VecEnv) startKeepalive() {
	period := e.cfg.Keepalive
	if period < 0 {
		return
	}
	if period == 0 {
		for _, sh := range e.shards {
			if sh.idle > 0 && (period == 0 || sh.idle/3 < period) {
				period = sh.idle / 3
			}
		}
		if period == 0 {
			return
		}
	}
	e.stopKeepalive, e.keepaliveDone = make(chan struct{}), make(chan struct{})
	go e.keepalive(period, e.stopKeepalive, e.keepaliveDone)
}

func (e *VecEnv) keepalive(period time.Duration, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		for _, sh := range e.shards {
			if time.Since(sh.c.LastSend()) < period {
				continue // a request went out recently: the server saw this client
			}
			ctx, cancel := context.WithTimeout(context.Background(), max(period, time.Second))
			p, err := send(ctx, sh.c, "ping", map[string]any{"op": "ping"})
			if err != nil {
				cancel()
				continue // the connection is gone; the next real call reports it
			}
			go func() {
				select {
				case <-stop:
					cancel()
				case <-ctx.Done():
				}
			}()
			_ = recv(ctx, p, nil) // best effort: a failure shows up on the next real call
			cancel()
		}
	}
}
