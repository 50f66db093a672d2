// Package bridge is the Go client of sparsepcl's Python environment server (python_server): it serves
// any Gymnasium environment to Go as an envs.VecEnv over ZeroMQ (a DEALER peer here, speaking ZMTP
// through zmq4; ROUTER there) and msgpack.
//
// A VecEnv either starts its own server processes (Start: a fresh ipc endpoint in a temp dir, a ready
// handshake that checks the protocol version, the process killed on Close or when the start context is
// cancelled) or dials running servers (Dial) and spreads its copies over them. Every call has a
// deadline (the context's, or Config.Timeout) that bounds the sending, the wait and a reply cut off
// half-way. Replies are matched to calls by request id: a waiting call reads its connection itself
// (one reader at a time; replies for other calls are handed to them), giving up while waiting for a
// message to begin leaves the stream in step (giving up in the middle of one fails the connection),
// and replies nobody waits for any more are discarded. A reset or step that ended without its reply
// leaves the copies' state unknown: calls then return ErrStateUnknown until a Reset of every copy.
// Replies are decoded within limits (ErrProtocol closes the connection of a bad one). Errors raised
// by the environment come back as *RemoteError. After each Reset and Step, EnvSeconds and ServerSeconds
// tell how much of the call the servers spent inside the envs and in all; the rest is the round trip.
//
// Servers beyond loopback require ZeroMQ PLAIN credentials (package bridge/auth): Config.Credentials
// authenticates Dial, and a refusal is ErrAuth, naming the endpoint and the cause. PLAIN does not
// encrypt (docs/bridge.md).
//
// The wire protocol is described in PROTOCOL.md next to this file. The package is cut by layer, each
// using only those below it: internal/transport (ZMTP streams, request ids, deadlines), internal/wire
// (the msgpack codec and the message schemas) and internal/server (the Python process); this package
// holds the protocol's calls (call.go) and the VecEnv over them.
package bridge
