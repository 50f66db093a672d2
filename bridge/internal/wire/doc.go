// Package wire is the env server protocol's codec (PROTOCOL.md): msgpack messages, arrays as raw
// little-endian bytes with dtype and shape, space descriptions, the reply envelope (a result or a
// structured error) and the message schemas. Replies are decoded within limits that a hostile peer
// cannot push past (scan.go); the step request and reply, sent at the rate of env steps, are encoded
// and decoded by hand (step.go), every other message through msgpack's reflection. It does no I/O.
package wire
