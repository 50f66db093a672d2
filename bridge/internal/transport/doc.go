// Package transport carries the env server's requests and replies over ZeroMQ: one ZMTP 3 stream
// per server (zmq4 does the greeting and handshake as a DEALER, frames are read and written here),
// requests matched to replies by an 8-byte id so that they can be pipelined and late replies
// discarded, and a deadline on everything that waits (the caller's context, or a bound on a message
// that has begun). It moves payloads as bytes: what they mean is the wire codec's business.
package transport
