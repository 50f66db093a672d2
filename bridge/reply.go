package bridge

import (
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// wireReplyInto decodes a reply with its result directly into Result's pointee.
type wireReplyInto struct {
	OK     bool       `msgpack:"ok"`
	Result any        `msgpack:"result"`
	Error  *wireError `msgpack:"error"`
}

type wireError struct {
	Type      string `msgpack:"type"`
	Message   string `msgpack:"message"`
	Traceback string `msgpack:"traceback"`
	Copy      int    `msgpack:"copy"`
	Fatal     bool   `msgpack:"fatal"`
}

// decodeReply is the one decoding of every reply payload: its result into out (nil: not kept), or
// the error it carries; err reports a malformed reply. A step reply that is a plain success takes
// the hand-written decoder (stepwire.go); everything else, a step reply with infos or an error
// included, goes through decodeGeneric.
func decodeReply(payload []byte, out any) (remote *wireError, err error) {
	if sr, ok := out.(*stepReply); ok {
		if sr.decodeFast(payload) {
			return nil, nil
		}
		*sr = stepReply{}
	}
	return decodeGeneric(payload, out)
}

// decodeGeneric decodes a reply payload with msgpack's reflection, within the limits of scanReply.
func decodeGeneric(payload []byte, out any) (remote *wireError, err error) {
	// The limits first: the reflection decoder trusts the lengths a message declares.
	if err := scanReply(payload); err != nil {
		return nil, err
	}
	// One decoding pass: the result goes straight into out (a pointer held by the interface field).
	wr := wireReplyInto{Result: out}
	if out == nil {
		wr.Result = &msgpack.RawMessage{}
	}
	if err := unmarshal(payload, &wr); err != nil {
		return nil, err
	}
	if !wr.OK {
		if wr.Error == nil {
			return nil, errors.New("neither ok nor an error")
		}
		return wr.Error, nil
	}
	return nil, nil
}

// unmarshal is msgpack.Unmarshal with its panics turned into errors: decoding a nil into the
// interface field that holds the result's pointer ({"result": nil}, found by FuzzReplyDecode) makes
// it panic in reflect, and a reply must never bring the process down.
func unmarshal(b []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("msgpack decoder panicked: %v", r)
		}
	}()
	return msgpack.Unmarshal(b, v)
}

// Hello is the server's answer to hello.
type Hello struct {
	Protocol  int    `msgpack:"protocol"`
	Server    string `msgpack:"server"`
	Python    string `msgpack:"python"`
	Gymnasium string `msgpack:"gymnasium"`
	NumPy     string `msgpack:"numpy"`
	PyZMQ     string `msgpack:"pyzmq"`
	Msgpack   string `msgpack:"msgpack"`
	MuJoCo    string `msgpack:"mujoco"`
	// IdleTimeout is the server's --idle-timeout in seconds (0: never): VecEnv pings every third of it.
	IdleTimeout float64 `msgpack:"idle_timeout"`
}
