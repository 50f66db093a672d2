package bridge

import (
	"errors"
	"fmt"
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

// ErrClosed is returned by calls on a closed VecEnv or connection.
var ErrClosed = errors.New("bridge: closed")

// ErrConnectionLost wraps failures of the transport (server died, socket closed under a call).
var ErrConnectionLost = errors.New("bridge: connection lost")
