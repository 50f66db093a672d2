package bridge

import (
	"errors"
	"fmt"

	"github.com/sparsepcl/sparsepcl/bridge/internal/transport"
)

// RemoteError is an error reported by the server: a Python exception or a rejected request.
type RemoteError struct {
	Op       string // the request that failed: make, reset, step, ...
	Endpoint string // the server
	Type     string // Python exception type or protocol error kind (UnknownEnv, ImportRefused, ...)
	Message  string
	// Traceback is the Python traceback, when there is one.
	Traceback string
	// Copy is the global index of the env copy at fault, or -1.
	Copy int
	// Fatal means the server closed the env group: the VecEnv cannot be used any more.
	Fatal bool
}

func (e *RemoteError) Error() string {
	where := ""
	if e.Copy >= 0 {
		where = fmt.Sprintf("copy %d: ", e.Copy)
	}
	fatal := ""
	if e.Fatal {
		fatal = " (fatal: env group closed)"
	}
	return fmt.Sprintf("bridge: %s on %s: %s%s: %s%s", e.Op, e.Endpoint, where, e.Type, e.Message, fatal)
}

// The transport's errors, as the bridge's callers see them.
var (
	// ErrClosed is returned by calls on a closed VecEnv or connection.
	ErrClosed = transport.ErrClosed
	// ErrConnectionLost wraps failures of the transport (server died, socket closed under a call).
	ErrConnectionLost = transport.ErrConnectionLost
	// ErrProtocol wraps replies that break the protocol: malformed msgpack, a message over the
	// decoding limits (declared lengths beyond the frame, too many values, nesting too deep), a wrong
	// schema. The connection they came on is closed.
	ErrProtocol = transport.ErrProtocol
	// ErrAuth wraps a handshake that failed on authentication: the server refused the credentials
	// (Config.Credentials), requires some and none were given, or takes none and some were given.
	// The error names the endpoint and which it was.
	ErrAuth = transport.ErrAuth
)

// ErrStateUnknown is returned by the calls of a VecEnv after a reset or step ended without its reply
// (a deadline, a cancellation, a lost or closed connection, a malformed reply): the servers may have
// carried the request out or not, so the copies' state is unknown. A Reset of every copy (no mask)
// makes it known again; after a lost connection only a new VecEnv helps. The error also wraps the
// failure that caused it.
var ErrStateUnknown = errors.New("bridge: env state unknown after a call that ended without its reply; Reset every copy (no mask) or make a new VecEnv")
