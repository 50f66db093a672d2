// Package bridge is the Go client of sparsepcl's Python environment server (python_server): it serves
// any Gymnasium environment to Go as an envs.VecEnv over ZeroMQ (a DEALER peer here, speaking ZMTP
// through zmq4; ROUTER there) and msgpack.
//
// A VecEnv either starts its own server processes (Start: a fresh ipc endpoint in a temp dir, a ready
// handshake that checks the protocol version, the process killed on Close or when the start context is
// cancelled) or dials running servers (Dial) and spreads its copies over them. Every call has a
// deadline (the context's, or Config.Timeout). Replies are matched to calls by request id: a waiting
// call reads its connection itself (one reader at a time; replies for other calls are handed to
// them), a deadline or cancellation stops only the wait for the next message to begin, so the stream
// never loses its framing, and replies nobody waits for any more are discarded. Errors raised by the
// environment come back as *RemoteError. After each Reset and Step, EnvSeconds and ServerSeconds
// tell how much of the call the servers spent inside the envs and in all; the rest is the round trip.
//
// The wire protocol is described in PROTOCOL.md next to this file.
package bridge
