package wire

import (
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// ProtocolVersion is the version of PROTOCOL.md this codec speaks; the client checks it in hello and
// in the ready handshake.
const ProtocolVersion = 2

// wireReplyInto decodes a reply with its result directly into Result's pointee.
type wireReplyInto struct {
	OK     bool        `msgpack:"ok"`
	Result any         `msgpack:"result"`
	Error  *ErrorReply `msgpack:"error"`
}

// ErrorReply is the structured error of a reply that failed (PROTOCOL.md: Reply payload).
type ErrorReply struct {
	Type      string `msgpack:"type"`
	Message   string `msgpack:"message"`
	Traceback string `msgpack:"traceback"`
	Copy      int    `msgpack:"copy"`
	Fatal     bool   `msgpack:"fatal"`
}

// EncodeRequest encodes a request (a map with an "op" key, PROTOCOL.md: Operations) as msgpack;
// AppendStepRequest encodes the step request by hand.
func EncodeRequest(req any) ([]byte, error) { return msgpack.Marshal(req) }

// DecodeReply is the one decoding of every reply payload: its result into out (nil: not kept), or
// the error it carries; err reports a malformed reply. A step reply that is a plain success takes
// the hand-written decoder (step.go); everything else, a step reply with infos or an error
// included, goes through decodeGeneric.
func DecodeReply(payload []byte, out any) (remote *ErrorReply, err error) {
	if sr, ok := out.(*StepReply); ok {
		if sr.decodeFast(payload) {
			return nil, nil
		}
		*sr = StepReply{}
	}
	return decodeGeneric(payload, out)
}

// decodeGeneric decodes a reply payload with msgpack's reflection, within the limits of scanReply.
func decodeGeneric(payload []byte, out any) (remote *ErrorReply, err error) {
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

// Spec is an env id's registration in the server's Gymnasium (gymnasium.spec), read without making
// the env. Nil fields are ones the id does not register.
type Spec struct {
	ID              string   `msgpack:"id"`
	RewardThreshold *float64 `msgpack:"reward_threshold"`
	MaxEpisodeSteps *int     `msgpack:"max_episode_steps"`
}

// MakeReply is the result of make.
type MakeReply struct {
	Handle int64 `msgpack:"handle"`
	Obs    Space `msgpack:"observation_space"`
	Act    Space `msgpack:"action_space"`
}

// ResetReply is the result of reset.
type ResetReply struct {
	Obs           Array            `msgpack:"obs"`
	Infos         []map[string]any `msgpack:"infos"`
	EnvSeconds    float64          `msgpack:"env_seconds"`
	ServerSeconds float64          `msgpack:"server_seconds"`
}

// StepReply is the result of step.
type StepReply struct {
	Obs           Array            `msgpack:"obs"`
	Rewards       Array            `msgpack:"rewards"`
	Terminated    Array            `msgpack:"terminated"`
	Truncated     Array            `msgpack:"truncated"`
	Infos         []map[string]any `msgpack:"infos"`
	EnvSeconds    float64          `msgpack:"env_seconds"`
	ServerSeconds float64          `msgpack:"server_seconds"`
}
