// Package bridge is the Go client of sparsepcl's Python environment server (python_server): it serves
// any Gymnasium environment to Go as an envs.VecEnv over ZeroMQ (a DEALER peer here, speaking ZMTP
// through zmq4; ROUTER there) and msgpack.
//
// A VecEnv either starts its own server processes (Start: a fresh ipc endpoint in a temp dir, a ready
// handshake that checks the protocol version, the process killed on Close or when the start context is
// cancelled) or dials running servers (Dial) and spreads its copies over them. Every call has a
// deadline (the context's, or Config.Timeout), because zmq4's receives cannot time out by themselves: one
// reader goroutine per connection routes replies to waiting calls by request id, and replies nobody
// waits for any more are discarded. Errors raised by the environment come back as *RemoteError.
//
// The wire protocol is described in PROTOCOL.md next to this file.
package bridge
