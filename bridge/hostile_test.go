package bridge

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/go-zeromq/zmq4/security/null"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/sparsepcl/sparsepcl/bridge/internal/transport"
	"github.com/sparsepcl/sparsepcl/bridge/internal/wire"
	"github.com/sparsepcl/sparsepcl/envs"
)

// The tests of this file reproduce the faults of issue 15: hostile replies, a peer that stalls in the
// middle of a reply, a step that times out and is carried out anyway.

// fakeReplies answers hello and make as a server of one Discrete(3)/Discrete(2) copy would, and
// every other request with the payload that reply returns for its op.
func fakeReplies(t *testing.T, payload []byte, reply func(op string) []byte) []byte {
	t.Helper()
	var req struct {
		Op string `msgpack:"op"`
	}
	if err := msgpack.Unmarshal(payload, &req); err != nil {
		t.Errorf("fake server: request: %v", err)
		return nil
	}
	var v any
	switch req.Op {
	case "hello":
		v = map[string]any{"ok": true, "result": map[string]any{"protocol": ProtocolVersion, "idle_timeout": 0.0}}
	case "make":
		v = map[string]any{"ok": true, "result": map[string]any{"handle": 7,
			"observation_space": map[string]any{"kind": "discrete", "n": 3, "start": 0},
			"action_space":      map[string]any{"kind": "discrete", "n": 2, "start": 0}}}
	case "close", "ping":
		v = map[string]any{"ok": true, "result": map[string]any{}}
	default:
		return reply(req.Op)
	}
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// startFakeRouter runs a zmq4 ROUTER that answers as fakeReplies does until the test ends.
func startFakeRouter(t *testing.T, reply func(op string) []byte) string {
	t.Helper()
	endpoint := "ipc://" + filepath.Join(t.TempDir(), "fake.sock")
	router := zmq4.NewRouter(context.Background())
	if err := router.Listen(endpoint); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { router.Close() })
	go func() {
		for {
			m, err := router.Recv()
			if err != nil {
				return
			}
			if len(m.Frames) != 3 {
				continue
			}
			out := fakeReplies(t, m.Frames[2], reply)
			if out == nil {
				continue
			}
			_ = router.Send(zmq4.NewMsgFrom(m.Frames[0], m.Frames[1], out))
		}
	}()
	return endpoint
}

// okReply builds {"ok": true, "result": {"obs": <1 int64 row>, "env_seconds": 0, key: raw}}, raw
// being any bytes at all (the hostile part).
func okReply(t *testing.T, key string, raw []byte) []byte {
	t.Helper()
	obs, err := msgpack.Marshal(wire.Array{DType: "int64", Shape: []int{1, 1}, Data: make([]byte, 8)})
	if err != nil {
		t.Fatal(err)
	}
	str := func(b []byte, s string) []byte {
		enc, err := msgpack.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return append(b, enc...)
	}
	b := []byte{0x82}
	b = str(b, "ok")
	b = append(b, 0xc3)
	b = str(b, "result")
	b = append(b, 0x83)
	b = str(b, "obs")
	b = append(b, obs...)
	b = str(b, "env_seconds")
	b = append(b, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0)
	b = str(b, key)
	return append(b, raw...)
}

// heapAllocs is the total of bytes allocated on the heap so far.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestMalformedReplies: replies whose declared lengths or nesting would make the decoder allocate
// gigabytes or overflow its stack (each killed the process before) are protocol errors: the call
// fails with ErrProtocol, the connection is closed, the process lives, and memory stays bounded.
func TestMalformedReplies(t *testing.T) {
	var current atomic.Pointer[[]byte]
	endpoint := startFakeRouter(t, func(string) []byte { return *current.Load() })
	huge := func(header ...byte) []byte { return header }
	cases := []struct {
		name  string
		reply []byte
	}{
		{"array32 of 2^32-1 in infos", okReply(t, "infos", huge(0xdd, 0xff, 0xff, 0xff, 0xff))},
		{"map32 of 2^32-1 in infos", okReply(t, "infos", huge(0xdf, 0xff, 0xff, 0xff, 0xff))},
		{"arrays nested 10 million deep", okReply(t, "infos", append(bytes.Repeat([]byte{0x91}, 10_000_000), 0xc0))},
		{"two million empty maps", okReply(t, "infos", append([]byte{0xdd, 0x00, 0x1e, 0x84, 0x80}, bytes.Repeat([]byte{0x80}, 2_000_000)...))},
		{"bin32 longer than the message", okReply(t, "infos", huge(0xc6, 0x7f, 0xff, 0xff, 0xff, 1, 2, 3))},
		{"extension type", okReply(t, "infos", huge(0xd4, 0x01, 0x00))},
		{"trailing bytes", append(okReply(t, "infos", []byte{0xc0}), 0xc0)},
		{"neither ok nor an error", []byte{0x81, 0xa2, 'o', 'k', 0xc2}},
		{"a nil result (made the decoder panic)", []byte{0x82, 0xa2, 'o', 'k', 0xc3, 0xa6, 'r', 'e', 's', 'u', 'l', 't', 0xc0}},
		{"wrong observation shape", func() []byte {
			b, _ := msgpack.Marshal(map[string]any{"ok": true, "result": map[string]any{"obs": wire.Array{DType: "int64", Shape: []int{2, 1}, Data: make([]byte, 16)}, "infos": nil, "env_seconds": 0.0}})
			return b
		}()},
	}
	for _, tc := range cases {
		for _, op := range []string{"reset", "step"} {
			current.Store(&tc.reply)
			ctx := testCtx(t, 30*time.Second)
			e, err := Dial(ctx, Config{EnvID: "Fake-v0", NumEnvs: 1}, endpoint)
			if err != nil {
				t.Fatal(err)
			}
			before := heapAllocs()
			if op == "reset" {
				_, _, err = e.Reset(ctx, envs.ResetRequest{})
			} else {
				_, err = e.Step(ctx, envs.NewBatch(e.ActionSpace(), 1))
			}
			allocated := heapAllocs() - before
			if !errors.Is(err, ErrProtocol) {
				t.Errorf("%s, %s: %v, want ErrProtocol", tc.name, op, err)
			}
			// The reply itself is read into memory (up to 10 MB here); nothing sized by what it declares.
			if allocated > uint64(len(tc.reply))+16<<20 {
				t.Errorf("%s, %s: the call allocated %d bytes for a reply of %d", tc.name, op, allocated, len(tc.reply))
			}
			// The connection is closed: the next call fails at once, and says why.
			if err := e.Ping(ctx); !errors.Is(err, ErrProtocol) {
				t.Errorf("%s, %s: ping after the bad reply: %v, want ErrProtocol", tc.name, op, err)
			}
			e.Close()
		}
	}
}

// ZMTP 3 frame flags, for writing broken frames by hand.
const (
	zmtpMore = 0x01
	zmtpLong = 0x02
)

// rawZMTPServer accepts one DEALER on a unix socket, does the ZMTP handshake as a ROUTER and then
// hands each request to serve with the connection, to write whatever it likes back.
func rawZMTPServer(t *testing.T, serve func(sc *transport.Stream, id, payload []byte) bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "raw.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		t.Cleanup(func() { nc.Close() })
		sc := transport.NewStream(nc)
		if _, err := zmq4.Open(sc, null.Security(), zmq4.Router, zmq4.SocketIdentity(""), true, nil); err != nil {
			t.Errorf("raw server handshake: %v", err)
			return
		}
		for {
			m, err := sc.ReadMessage(1 << 20)
			if err != nil || len(m.Frames) != 2 || !serve(sc, m.Frames[0], m.Frames[1]) {
				return
			}
		}
	}()
	return "ipc://" + path
}

// TestHalfFrameStall: a peer that sends half a reply and then holds the connection open no longer
// holds the call past its deadline (it took messageTimeout, 30 s, before); the connection, whose
// framing is lost, is failed.
func TestHalfFrameStall(t *testing.T) {
	for _, where := range []string{"in the payload", "in a frame header"} {
		t.Run(where, func(t *testing.T) {
			endpoint := rawZMTPServer(t, func(sc *transport.Stream, id, payload []byte) bool {
				out := fakeReplies(t, payload, func(string) []byte { return nil })
				if out != nil {
					return sc.WriteMessage(time.Now().Add(5*time.Second), id, out) == nil
				}
				// The id frame, then a payload frame that announces 200 bytes and brings 20 (or
				// half of an 8-byte length).
				half := append([]byte{zmtpMore, 8}, id...)
				if where == "in the payload" {
					half = append(half, 0, 200)
					half = append(half, make([]byte, 20)...)
				} else {
					half = append(half, zmtpLong, 0, 0, 0)
				}
				_, _ = sc.Conn.Write(half)
				return true // and hold the connection
			})
			e, err := Dial(testCtx(t, 20*time.Second), Config{EnvID: "Fake-v0", NumEnvs: 1, Timeout: 2 * time.Second}, endpoint)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			start := time.Now()
			_, _, err = e.Reset(context.Background(), envs.ResetRequest{})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("reset from a stalled peer: %v, want DeadlineExceeded", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("reset with a 2 s timeout returned after %v", d)
			}
			if err := e.Ping(testCtx(t, 5*time.Second)); !errors.Is(err, ErrConnectionLost) {
				t.Fatalf("ping after a cut-off reply: %v, want ErrConnectionLost", err)
			}
		})
	}
}

// TestTimedOutStepIsNotSilentlyApplied reproduces the probe: Copy-v0 at base 10 with a 1 s
// timeout, the server stopped (SIGSTOP), two steps that time out, the server continued. Before, a
// third step succeeded and showed all three steps applied. Now every call but a full Reset says the
// state is unknown, and after the Reset exactly the steps made since count.
func TestTimedOutStepIsNotSilentlyApplied(t *testing.T) {
	e := startEnv(t, Config{EnvID: "Copy-v0", NumEnvs: 1, Kwargs: map[string]any{"base": 10}, Timeout: time.Second}, 1, ServerOptions{})
	pid := e.servers[0].Pid()
	ctx := testCtx(t, 60*time.Second)
	input := envs.ResetRequest{PerCopy: []map[string]any{{"input": []int{1, 2, 3, 4, 5, 6, 7, 8}}}}
	obs, _, err := e.Reset(ctx, input)
	if err != nil {
		t.Fatal(err)
	}
	if obs.Ints[0] != 1 {
		t.Fatalf("observation after reset: %d, want 1", obs.Ints[0])
	}
	right := envs.Array{DType: envs.Int64, Shape: []int{1, 3}, Ints: []int64{1, 0, 0}} // move right, write nothing
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	continued := false
	defer func() {
		if !continued {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}()
	if _, err := e.Step(context.Background(), right); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("step on a stopped server: %v, want DeadlineExceeded", err)
	}
	if _, err := e.Step(context.Background(), right); !errors.Is(err, ErrStateUnknown) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second step: %v, want ErrStateUnknown wrapping DeadlineExceeded", err)
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	continued = true
	_, err = e.Step(ctx, right)
	if !errors.Is(err, ErrStateUnknown) || !strings.Contains(err.Error(), "Reset") {
		t.Fatalf("step after the server continued: %v, want ErrStateUnknown saying a Reset is needed", err)
	}
	if obs, _, err = e.Reset(ctx, input); err != nil {
		t.Fatalf("reset after the timeout: %v", err)
	}
	if obs.Ints[0] != 1 {
		t.Fatalf("observation after the reset: %d, want 1", obs.Ints[0])
	}
	res, err := e.Step(ctx, right)
	if err != nil {
		t.Fatalf("step after the reset: %v", err)
	}
	if res.Obs.Ints[0] != 2 {
		t.Fatalf("one step after the reset observes %d, want 2 (a late step was applied after the reset)", res.Obs.Ints[0])
	}
}

// TestRenderModeRefusedAndDeathReported: a display-bound render mode is refused (it aborted the
// whole server, for every client, on a machine without a display); allowed anyway, or when an env
// aborts the process some other way, the Go error carries the last lines of the server's stderr
// instead of a bare "connection lost: EOF".
func TestRenderModeRefusedAndDeathReported(t *testing.T) {
	needServer(t)
	srv, err := StartServer(testCtx(t, 60*time.Second), ServerOptions{AllowImports: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ctx := testCtx(t, 60*time.Second)
	_, err = Dial(ctx, Config{EnvID: "HalfCheetah-v5", NumEnvs: 1, Kwargs: map[string]any{"render_mode": "human"}}, srv.Endpoint)
	var re *RemoteError
	if !errors.As(err, &re) || re.Type != "RenderModeRefused" {
		t.Fatalf("make with render_mode human: %v, want RemoteError RenderModeRefused", err)
	}
	other, err := Dial(ctx, Config{EnvID: "Copy-v0", NumEnvs: 1}, srv.Endpoint)
	if err != nil {
		t.Fatalf("the server after a refused make: %v", err)
	}
	other.Close()

	cases := []struct {
		name string
		cfg  Config
		opts ServerOptions
		want string // in the error: a line the dying process wrote to stderr
	}{
		{"an env that aborts", Config{EnvID: "python_server.testing_envs:AbortEnv", NumEnvs: 1}, ServerOptions{AllowImports: true}, "native assertion"},
	}
	if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		// The probe's case itself: GLFW's assertion, with faulthandler's Python stack after it.
		cases = append(cases, struct {
			name string
			cfg  Config
			opts ServerOptions
			want string
		}{"render_mode human allowed, no display", Config{EnvID: "HalfCheetah-v5", NumEnvs: 1, Kwargs: map[string]any{"render_mode": "human"}}, ServerOptions{AllowRender: true}, "Assertion"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := startEnv(t, tc.cfg, 1, tc.opts)
			_, _, err := e.Reset(testCtx(t, 60*time.Second), envs.ResetRequest{})
			if !errors.Is(err, ErrConnectionLost) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "server process exited") {
				t.Fatalf("reset that kills the server: %v\nwant ErrConnectionLost with the exit status and %q from its stderr", err, tc.want)
			}
			t.Logf("the error: %v", err)
		})
	}
}

// TestAnotherClientsHandle: a second client that sends the handle of the first one's env group
// (which it may have guessed or sniffed) gets UnknownHandle for step, reset, spaces and close, and
// the owner's envs go on untouched.
func TestAnotherClientsHandle(t *testing.T) {
	e := startEnv(t, Config{EnvID: "Copy-v0", NumEnvs: 2}, 1, ServerOptions{})
	ctx := testCtx(t, 30*time.Second)
	if _, _, err := e.Reset(ctx, envs.ResetRequest{}); err != nil {
		t.Fatal(err)
	}
	h := e.shards[0].handle
	intruder := rawDealer(t, e.servers[0].Endpoint)
	acts := wire.EncodeArray(envs.NewBatch(e.ActionSpace(), 2), envs.Int64, []int{2, 3})
	for i, req := range []map[string]any{
		{"op": "step", "handle": h, "actions": acts},
		{"op": "reset", "handle": h},
		{"op": "spaces", "handle": h},
		{"op": "close", "handle": h},
	} {
		payload, err := msgpack.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		r := rawCall(t, intruder, uint64(i+1), payload)
		if r.OK || r.Error == nil || r.Error.Type != "UnknownHandle" {
			t.Errorf("%s with another client's handle: %+v, want UnknownHandle", req["op"], r.Error)
		}
	}
	if _, err := e.Step(ctx, envs.NewBatch(e.ActionSpace(), 2)); err != nil {
		t.Fatalf("the owner's step after the intruder's requests: %v", err)
	}
}

// TestQuotaOptions: ServerOptions' quotas reach the server; a make over them is a RemoteError that
// names the flag.
func TestQuotaOptions(t *testing.T) {
	needServer(t)
	srv, err := StartServer(testCtx(t, 60*time.Second), ServerOptions{MaxCopiesPerClient: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	_, err = Dial(testCtx(t, 30*time.Second), Config{EnvID: "Copy-v0", NumEnvs: 4}, srv.Endpoint)
	var re *RemoteError
	if !errors.As(err, &re) || re.Type != "QuotaExceeded" || !strings.Contains(re.Message, "--max-copies-per-client") {
		t.Fatalf("make over the quota: %v, want QuotaExceeded", err)
	}
	e, err := Dial(testCtx(t, 30*time.Second), Config{EnvID: "Copy-v0", NumEnvs: 3}, srv.Endpoint)
	if err != nil {
		t.Fatalf("make within the quota: %v", err)
	}
	e.Close()
}

// TestSocketDirs: Close removes the socket directory (the sweep of stale ones is tested in
// internal/server).
func TestSocketDirs(t *testing.T) {
	e := startEnv(t, Config{EnvID: "Copy-v0", NumEnvs: 1}, 1, ServerOptions{})
	dir := filepath.Dir(strings.TrimPrefix(e.servers[0].Endpoint, "ipc://"))
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	e.Close()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket dir %s after Close: %v, want it gone", dir, err)
	}

}
