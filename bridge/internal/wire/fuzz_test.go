package wire

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/sparsepcl/sparsepcl/envs"
)

// The fuzz targets feed arbitrary bytes to the client's reply decoding, as every op's reply, and
// check that it never panics, never overflows its stack and never allocates more than a small
// multiple of the reply's size (replies declaring 2^32-1 elements once made it allocate 4 GiB).
// FuzzDecodeFast (step_test.go) checks the hand-written step decoder against the generic one.
// `go test` runs their seeds; the longer runs are described in PROTOCOL.md (Reliability).

// allocBound is what decoding a reply of n bytes, every way the client might, may allocate: a few
// hundred bytes per byte of input (a one-byte map entry decodes to a map slot, a key and a boxed
// value, for each of the reply types tried) plus a constant.
func allocBound(n int) uint64 { return 512*uint64(n) + 4<<20 }

// fuzzMaxReply stands for Config.MaxReplyBytes when buffers are sized from decoded spaces.
const fuzzMaxReply = 1 << 20

// exerciseReply does with b everything the client does with a reply payload of any op.
func exerciseReply(b []byte) {
	var sr StepReply
	if sr.decodeFast(b) {
		for _, w := range []*Array{&sr.Obs, &sr.Rewards, &sr.Terminated, &sr.Truncated} {
			_, _ = DecodeArray(w, "fuzz")
		}
	}
	_, _ = DecodeReply(b, nil)
	var h Hello
	_, _ = DecodeReply(b, &h)
	var mk MakeReply
	if e, err := DecodeReply(b, &mk); err == nil && e == nil {
		for _, w := range []*Space{&mk.Obs, &mk.Act} {
			s, err := w.toSpace(0)
			if err == nil && FitsReplies(s, 1, fuzzMaxReply) == nil {
				envs.NewBatch(s, 1)
				_ = s.String()
			}
		}
	}
	var rr ResetReply
	if e, err := DecodeReply(b, &rr); err == nil && e == nil {
		_, _ = DecodeArray(&rr.Obs, "fuzz")
		for _, m := range rr.Infos {
			PlainInfo(m)
		}
	}
	sr = StepReply{}
	if e, err := DecodeReply(b, &sr); err == nil && e == nil {
		for _, w := range []*Array{&sr.Obs, &sr.Rewards, &sr.Terminated, &sr.Truncated} {
			_, _ = DecodeArray(w, "fuzz")
		}
		for _, m := range sr.Infos {
			PlainInfo(m)
		}
	}
}

// replySeeds are well-formed replies of every op, and the hostile ones of issue 15.
func replySeeds(tb testing.TB) [][]byte {
	mp := func(v any) []byte {
		b, err := msgpack.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	arr := func(d string, shape []int, n int) Array {
		return Array{DType: d, Shape: shape, Data: make([]byte, n)}
	}
	box := map[string]any{"kind": "box", "shape": []int{2}, "dtype": "float32", "low": arr("float64", []int{2}, 16), "high": arr("float64", []int{2}, 16)}
	tuple := map[string]any{"kind": "tuple", "spaces": []any{
		map[string]any{"kind": "discrete", "n": 2, "start": 0}, map[string]any{"kind": "discrete", "n": 5, "start": -2},
		map[string]any{"kind": "multi_discrete", "nvec": arr("int64", []int{2}, 16), "starts": arr("int64", []int{2}, 16)},
		map[string]any{"kind": "multi_binary", "n": 3}}}
	dict := map[string]any{"kind": "dict", "keys": []string{"a", "b"}, "spaces": []any{box, tuple}}
	step := map[string]any{"obs": arr("float64", []int{2, 2}, 32), "rewards": arr("float64", []int{2}, 16),
		"terminated": arr("bool", []int{2}, 2), "truncated": arr("bool", []int{2}, 2), "infos": nil, "env_seconds": 0.5, "server_seconds": 0.75}
	stepInfos := map[string]any{}
	for k, v := range step {
		stepInfos[k] = v
	}
	stepInfos["infos"] = []any{map[string]any{"x": 1.5, "arr": arr("float32", []int{3}, 12), "nested": []any{1, "two", nil, true}}, nil}
	seeds := [][]byte{
		mp(map[string]any{"ok": true, "result": map[string]any{"protocol": 2, "server": "0.4.0", "idle_timeout": 300.0}}),
		mp(map[string]any{"ok": true, "result": map[string]any{"handle": 12345, "observation_space": dict, "action_space": tuple}}),
		mp(map[string]any{"ok": true, "result": map[string]any{"obs": arr("int64", []int{2, 1}, 16), "infos": []any{map[string]any{"seed": 3}, nil}, "env_seconds": 0.1}}),
		mp(map[string]any{"ok": true, "result": step}),
		mp(map[string]any{"ok": true, "result": stepInfos}),
		mp(map[string]any{"ok": false, "error": map[string]any{"type": "RuntimeError", "message": "boom", "traceback": "Traceback...", "copy": 3, "fatal": true}}),
		{0xdd, 0xff, 0xff, 0xff, 0xff},
		{0xdf, 0xff, 0xff, 0xff, 0xff},
		append(bytes.Repeat([]byte{0x91}, 200), 0xc0),
		append([]byte{0xdc, 0x01, 0x00}, bytes.Repeat([]byte{0x80}, 0x100)...),
	}
	// The fast path's own encoding of a step reply.
	fast := []byte{0x82}
	fast = appendStr(fast, "ok")
	fast = append(fast, 0xc3)
	fast = appendStr(fast, "result")
	fast = append(fast, mp(step)...)
	return append(seeds, fast)
}

func FuzzReplyDecode(f *testing.F) {
	for _, s := range replySeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		before := heapAllocs()
		exerciseReply(b)
		if got := heapAllocs() - before; got > allocBound(len(b)) {
			t.Fatalf("decoding a reply of %d bytes allocated %d bytes", len(b), got)
		}
	})
}

// TestReplyDecodeMutations is the short fuzz run that every `go test` (and so CI) makes: random
// mutations of the seeds (flipped bytes, cuts, hostile headers spliced in), each decoded every way
// with the allocation bound of FuzzReplyDecode. The coverage-guided runs go much further.
func TestReplyDecodeMutations(t *testing.T) {
	seeds := replySeeds(t)
	hostile := [][]byte{{0xdd, 0xff, 0xff, 0xff, 0xff}, {0xdf, 0xff, 0xff, 0xff, 0xff}, {0xc6, 0x7f, 0xff, 0xff, 0xff},
		{0xdb, 0xff, 0xff, 0xff, 0xff}, {0xdc, 0xff, 0xff}, bytes.Repeat([]byte{0x91}, 100), {0xc1}, {0xd4, 0x01, 0x00}, {0xc0}}
	rng := rand.New(rand.NewPCG(15, 15))
	n := 5000
	if testing.Short() {
		n = 1000
	}
	for i := range n {
		b := slices.Clone(seeds[rng.IntN(len(seeds))])
		for range 1 + rng.IntN(3) {
			switch rng.IntN(4) {
			case 0:
				if len(b) > 0 {
					b[rng.IntN(len(b))] = byte(rng.IntN(256))
				}
			case 1:
				if len(b) > 0 {
					b = b[:rng.IntN(len(b))]
				}
			case 2:
				at := rng.IntN(len(b) + 1)
				b = slices.Insert(b, at, hostile[rng.IntN(len(hostile))]...)
			default:
				if len(b) > 0 {
					at := rng.IntN(len(b))
					b = slices.Insert(b, at, b[at:min(len(b), at+1+rng.IntN(16))]...)
				}
			}
		}
		before := heapAllocs()
		exerciseReply(b)
		if got := heapAllocs() - before; got > allocBound(len(b)) {
			t.Fatalf("mutation %d: decoding a reply of %d bytes allocated %d bytes: %x", i, len(b), got, b)
		}
	}
}
