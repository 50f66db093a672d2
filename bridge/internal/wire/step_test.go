package wire

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/vmihailenco/msgpack/v5"
)

// stepRequest is the step request's schema, decoded by the reflection codec to check the hand encoder.
type stepRequest struct {
	Op      string `msgpack:"op"`
	Handle  int64  `msgpack:"handle"`
	Lo      int    `msgpack:"lo"`
	Hi      int    `msgpack:"hi"`
	Actions Array  `msgpack:"actions"`
}

// TestAppendStepRequest decodes hand-encoded requests with the reflection codec, for every dtype,
// every integer width of handle/lo/hi and every bin length class.
func TestAppendStepRequest(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	dtypes := []envs.DType{envs.Float64, envs.Float32, envs.Int64, envs.Int32, envs.Int8, envs.Uint8, envs.Bool}
	ints := []int64{0, 1, 127, 128, 255, 256, 65535, 65536, 1<<31 - 1, 1 << 31, 1<<32 - 1, 1 << 32, 1<<62 + 3}
	shapes := [][2]int{{1, 1}, {16, 6}, {31, 1}, {300, 1}, {70000, 1}}
	for _, d := range dtypes {
		for k, sh := range shapes {
			rows, size := sh[0], sh[1]
			a := envs.NewArray(d, rows, size)
			for i := range a.Len() {
				switch d {
				case envs.Float64:
					a.Floats[i] = rng.NormFloat64() * 1e6
				case envs.Float32:
					a.Floats[i] = float64(float32(rng.NormFloat64()))
				case envs.Bool:
					a.Ints[i] = int64(rng.IntN(2))
				case envs.Uint8:
					a.Ints[i] = int64(rng.IntN(256))
				case envs.Int8:
					a.Ints[i] = int64(rng.IntN(256) - 128)
				case envs.Int32:
					a.Ints[i] = int64(int32(rng.Uint32()))
				default:
					a.Ints[i] = int64(rng.Uint64())
				}
			}
			handle, lo := ints[(k*3)%len(ints)], int(ints[(k*5+1)%len(ints)])
			hi := lo + rows
			b := AppendStepRequest([]byte{0xff}, handle, lo, hi, a, d, rows, size)
			if b[0] != 0xff {
				t.Fatal("AppendStepRequest overwrote dst")
			}
			var got stepRequest
			if err := msgpack.Unmarshal(b[1:], &got); err != nil {
				t.Fatalf("%s %v: %v", d, sh, err)
			}
			want := stepRequest{Op: "step", Handle: handle, Lo: lo, Hi: hi, Actions: EncodeArray(a, d, []int{rows, size})}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s %v: decoded %+v, want %+v", d, sh, got.Actions.Shape, want.Actions.Shape)
			}
		}
	}
	for _, v := range []int64{-1, -32, -33, -129, math.MinInt32, math.MinInt32 - 1, math.MinInt64} {
		var got int64
		if err := msgpack.Unmarshal(appendInt(nil, v), &got); err != nil || got != v {
			t.Errorf("appendInt(%d) decodes to %d, %v", v, got, err)
		}
	}
	for _, n := range []int{0, 31, 32, 255, 256, 65535, 65536} {
		s := strings.Repeat("k", n)
		var got string
		if err := msgpack.Unmarshal(appendStr(nil, s), &got); err != nil || got != s {
			t.Errorf("appendStr of %d bytes: %v", n, err)
		}
	}
}

// replyBytes packs replies the way the server does: msgpack.packb on dicts built by EnvGroup.step
// and Server.handle (python_server/envgroup.py, server.py), so the fast path is checked against the
// bytes it really meets.
func replyBytes(t *testing.T, script string) [][]byte {
	t.Helper()
	cmd := pythonCmd(t, "-c", `
import json, sys, msgpack, numpy as np
from python_server import wire
out = []
def reply(res): out.append(msgpack.packb({"ok": True, "result": res}, use_bin_type=True).hex())
def step(obs, rew, term, trunc, infos=None, t=0.25, server=True):
    res = {"obs": wire.encode_array(obs), "rewards": wire.encode_array(rew), "terminated": wire.encode_array(term),
           "truncated": wire.encode_array(trunc), "infos": infos, "env_seconds": t}
    if server:
        res["server_seconds"] = t + 1e-4
    reply(res)
`+script+`
json.dump(out, sys.stdout)`)
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	var hexes []string
	if err := json.Unmarshal(raw, &hexes); err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, len(hexes))
	for i, h := range hexes {
		if out[i], err = hex.DecodeString(h); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// genericStep decodes a step reply the slow way (the reference for the fast path).
func genericStep(b []byte) (StepReply, error) {
	var r StepReply
	e, err := decodeGeneric(b, &r)
	if err == nil && e != nil {
		err = fmt.Errorf("%s: %s", e.Type, e.Message)
	}
	return r, err
}

// TestDecodeFastMatchesGeneric: replies the server really packs take the fast path and decode to
// what the reflection codec gives; errors and infos are left to it.
func TestDecodeFastMatchesGeneric(t *testing.T) {
	fast := replyBytes(t, `
for n, k in [(1, 17), (16, 17), (64, 17), (16, 1), (300, 2), (4000, 17)]:
    step(np.random.default_rng(n).normal(size=(n, k)), np.arange(n, dtype=np.float64) - 3.5,
         np.arange(n) % 2 == 0, np.arange(n) % 3 == 0, None, n * 1e-6)
step(np.arange(16 * 3, dtype=np.int64).reshape(16, 3), np.zeros(16), np.zeros(16, bool), np.ones(16, bool))
step(np.zeros((2, 84 * 84), dtype=np.uint8), np.zeros(2), np.zeros(2, bool), np.zeros(2, bool), None, 0.0)
step(np.zeros((2, 5), dtype=np.float32), np.array([np.inf, np.nan]), np.zeros(2, bool), np.zeros(2, bool))
step(np.zeros((2, 3)), np.zeros(2), np.zeros(2, bool), np.zeros(2, bool), server=False)  # a 0.2.0 server
`)
	slow := replyBytes(t, `
step(np.zeros((2, 3)), np.zeros(2), np.zeros(2, bool), np.zeros(2, bool), [{"x": 1}, None])
out.append(msgpack.packb({"ok": False, "error": {"type": "ValueError", "message": "bad", "traceback": "tb", "copy": 1, "fatal": False}}).hex())
out.append(msgpack.packb({"ok": True, "result": {"obs": None}}).hex())
`)
	for i, b := range fast {
		var r StepReply
		if !r.decodeFast(b) {
			t.Fatalf("reply %d: fast path refused a plain step reply", i)
		}
		want, err := genericStep(b)
		if err != nil {
			t.Fatal(err)
		}
		if !sameStep(r, want) {
			t.Fatalf("reply %d: fast %+v, generic %+v", i, r.Obs.Shape, want.Obs.Shape)
		}
	}
	for i, b := range slow {
		var r StepReply
		if r.decodeFast(b) {
			t.Fatalf("slow reply %d took the fast path", i)
		}
	}
	if _, err := genericStep(slow[1]); err == nil || !strings.Contains(err.Error(), "ValueError") {
		t.Fatalf("an error reply decodes to %v", err)
	}

	// Every truncation, a trailing byte and corrupted bytes are refused or decoded, never a panic,
	// and whatever the fast path accepts the generic decoder reads the same way.
	b := fast[1]
	for n := range len(b) {
		var r StepReply
		if r.decodeFast(b[:n]) {
			t.Fatalf("a reply truncated to %d of %d bytes took the fast path", n, len(b))
		}
	}
	var r StepReply
	if r.decodeFast(append(bytes.Clone(b), 0xc0)) {
		t.Fatal("a reply with a trailing byte took the fast path")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		c := bytes.Clone(b)
		for range 1 + rng.IntN(3) {
			c[rng.IntN(len(c))] = byte(rng.Uint32())
		}
		checkFastAgrees(t, c)
	}
}

func checkFastAgrees(t *testing.T, b []byte) {
	t.Helper()
	var r StepReply
	if !r.decodeFast(b) {
		return
	}
	want, err := genericStep(b)
	if err != nil {
		t.Fatalf("fast path accepted % x, generic decoder: %v", b, err)
	}
	if !sameStep(r, want) {
		t.Fatalf("fast path and generic decoder disagree on % x", b)
	}
}

// sameStep compares decoded replies: env_seconds by bits (a corrupted one may be NaN), empty
// shapes whether nil or not.
func sameStep(a, b StepReply) bool {
	arrays := func(r *StepReply) []*Array { return []*Array{&r.Obs, &r.Rewards, &r.Terminated, &r.Truncated} }
	for i, x := range arrays(&a) {
		y := arrays(&b)[i]
		if x.DType != y.DType || !slices.Equal(x.Shape, y.Shape) || !bytes.Equal(x.Data, y.Data) {
			return false
		}
	}
	return math.Float64bits(a.EnvSeconds) == math.Float64bits(b.EnvSeconds) &&
		math.Float64bits(a.ServerSeconds) == math.Float64bits(b.ServerSeconds) && a.Infos == nil && b.Infos == nil
}

// FuzzDecodeFast: whatever the fast path accepts, the reflection codec decodes the same way.
func FuzzDecodeFast(f *testing.F) {
	arr := func(d string, shape []int, data []byte) map[string]any {
		return map[string]any{"dtype": d, "shape": shape, "data": data}
	}
	seed, err := msgpack.Marshal(map[string]any{"ok": true, "result": map[string]any{
		"obs": arr("float64", []int{1, 2}, make([]byte, 16)), "rewards": arr("float64", []int{1}, make([]byte, 8)),
		"terminated": arr("bool", []int{1}, []byte{1}), "truncated": arr("bool", []int{1}, []byte{0}),
		"infos": nil, "env_seconds": 0.5,
	}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{0x82, 0xa2, 'o', 'k', 0xc3, 0xa6, 'r', 'e', 's', 'u', 'l', 't', 0x80})
	f.Fuzz(func(t *testing.T, b []byte) { checkFastAgrees(t, b) })
}

// BenchmarkStepCodec encodes a step request and decodes its reply (16 HalfCheetah copies: 6 float32
// actions, 17 float64 observations each) with the reflection codec and by hand, side by side.
func BenchmarkStepCodec(b *testing.B) {
	const n = 16
	act := envs.NewArray(envs.Float32, n, 6)
	arr := func(d envs.DType, shape ...int) map[string]any {
		a := envs.NewArray(d, shape...)
		w := EncodeArray(a, d, shape)
		return map[string]any{"dtype": w.DType, "shape": shape, "data": w.Data}
	}
	reply, err := msgpack.Marshal(map[string]any{"ok": true, "result": map[string]any{
		"obs": arr(envs.Float64, n, 17), "rewards": arr(envs.Float64, n), "terminated": arr(envs.Bool, n),
		"truncated": arr(envs.Bool, n), "infos": nil, "env_seconds": 0.001,
	}})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("reflection", func(b *testing.B) {
		for b.Loop() {
			req := stepRequest{Op: "step", Handle: 1, Lo: 0, Hi: n, Actions: EncodeArray(act, envs.Float32, []int{n, 6})}
			if _, err := msgpack.Marshal(&req); err != nil {
				b.Fatal(err)
			}
			var r StepReply
			if _, err := decodeGeneric(reply, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hand", func(b *testing.B) {
		for b.Loop() {
			_ = AppendStepRequest(make([]byte, 0, 96+n*6*4), 1, 0, n, act, envs.Float32, n, 6)
			var r StepReply
			if !r.decodeFast(reply) {
				b.Fatal("fast path refused the reply")
			}
		}
	})
}
