package bridge

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/sparsepcl/sparsepcl/bridge/internal/wire"
	"github.com/sparsepcl/sparsepcl/envs"
)

const slowEnv = "python_server.testing_envs:SlowEnv"

// TestServerKilledMidStep: the error comes well within the deadline, nothing leaks, and a new server starts.
func TestServerKilledMidStep(t *testing.T) {
	needServer(t)
	base := runtime.NumGoroutine()
	e, err := Start(testCtx(t, 60*time.Second), Config{EnvID: slowEnv, Kwargs: map[string]any{"delay": 30.0}, NumEnvs: 2}, 1, ServerOptions{AllowImports: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, 20*time.Second)
	if _, _, err := e.Reset(ctx, envs.ResetRequest{}); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		e.servers[0].Kill()
	}()
	start := time.Now()
	_, err = e.Step(ctx, envs.NewBatch(e.ActionSpace(), 2))
	if !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("step on a killed server: %v, want ErrConnectionLost", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("error took %v", d)
	}
	e.Close()
	waitGoroutines(t, base)
	e2 := startEnv(t, Config{EnvID: "Copy-v0", NumEnvs: 1}, 1, ServerOptions{})
	if _, _, err := e2.Reset(ctx, envs.ResetRequest{}); err != nil {
		t.Fatalf("new server after a kill: %v", err)
	}
}

// TestHungServerDeadline: a server stuck in env.step gives a deadline error, and Close still cleans up.
func TestHungServerDeadline(t *testing.T) {
	needServer(t)
	base := runtime.NumGoroutine()
	e, err := Start(testCtx(t, 60*time.Second), Config{EnvID: slowEnv, NumEnvs: 1, Timeout: 500 * time.Millisecond}, 1, ServerOptions{AllowImports: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Reset(context.Background(), envs.ResetRequest{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		ctx  context.Context
	}{
		{"config timeout", context.Background()},
		{"context deadline", testCtx(t, 300*time.Millisecond)},
	} {
		start := time.Now()
		_, err := e.Step(tc.ctx, envs.NewBatch(e.ActionSpace(), 1))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: %v, want DeadlineExceeded", tc.name, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("%s: took %v", tc.name, d)
		}
	}
	e.Close()
	waitGoroutines(t, base)
}

// rawDealer is a hand-driven client for sending what the bridge never would.
func rawDealer(t *testing.T, endpoint string) zmq4.Socket {
	t.Helper()
	s := zmq4.NewDealer(context.Background())
	if err := s.Dial(endpoint); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// rawReply is a reply as rawCall returns it: the result left encoded, or the error.
type rawReply struct {
	OK     bool
	Result msgpack.RawMessage
	Error  *wire.ErrorReply
}

func rawCall(t *testing.T, s zmq4.Socket, id uint64, payload []byte) rawReply {
	t.Helper()
	var idb [8]byte
	binary.LittleEndian.PutUint64(idb[:], id)
	if err := s.SendMulti(zmq4.NewMsgFrom(idb[:], payload)); err != nil {
		t.Fatal(err)
	}
	got := make(chan zmq4.Msg, 1)
	go func() {
		m, _ := s.Recv()
		got <- m
	}()
	select {
	case m := <-got:
		if len(m.Frames) != 2 || binary.LittleEndian.Uint64(m.Frames[0]) != id {
			t.Fatalf("reply frames %v", m.Frames)
		}
		var r rawReply
		e, err := wire.DecodeReply(m.Frames[1], &r.Result)
		if err != nil {
			t.Fatal(err)
		}
		r.OK, r.Error = e == nil, e
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no reply")
	}
	return rawReply{}
}

// TestBadMessages: garbage, malformed and oversized requests get error replies or are dropped, while
// another client keeps being served.
func TestBadMessages(t *testing.T) {
	needServer(t)
	srv, err := StartServer(testCtx(t, 60*time.Second), ServerOptions{MaxMessageBytes: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	good, err := Dial(testCtx(t, 30*time.Second), Config{EnvID: "Copy-v0", NumEnvs: 2}, srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { good.Close() })
	bad := rawDealer(t, srv.Endpoint)
	mp := func(v any) []byte {
		b, err := msgpack.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := []struct {
		name, payload string
		wantType      string
	}{
		{"garbage", "\xc1\xff\x00garbage", "DecodeError"},
		{"truncated", string(mp(map[string]any{"op": "hello"})[:5]), "DecodeError"},
		{"not a map", string(mp([]int{1, 2})), "ProtocolError"},
		{"unknown op", string(mp(map[string]any{"op": "explode"})), "ProtocolError"},
		{"bad handle type", string(mp(map[string]any{"op": "step", "handle": "x"})), "ProtocolError"},
		{"unknown handle", string(mp(map[string]any{"op": "step", "handle": 999})), "UnknownHandle"},
		{"bad array", string(mp(map[string]any{"op": "make", "env_id": "Copy-v0", "num_envs": 1 << 20})), "ProtocolError"},
		{"oversized", strings.Repeat("x", 1<<16+100), "MessageTooLarge"},
	}
	for i, tc := range cases {
		r := rawCall(t, bad, uint64(i+1), []byte(tc.payload))
		if r.OK || r.Error == nil || r.Error.Type != tc.wantType {
			t.Errorf("%s: reply %+v, want error %s", tc.name, r.Error, tc.wantType)
		}
	}
	// A wrong frame count or a message far over the cap is dropped (libzmq drops the peer); no reply.
	_ = bad.SendMulti(zmq4.NewMsgFrom([]byte("only one frame")))
	huge := rawDealer(t, srv.Endpoint)
	_ = huge.SendMulti(zmq4.NewMsgFrom(make([]byte, 8), make([]byte, 1<<17)))
	// Server-side validation of a step the Go client would have refused: wrong dtype, shape, range.
	mk := rawCall(t, bad, 100, mp(map[string]any{"op": "make", "env_id": "Copy-v0", "num_envs": 2, "kwargs": map[string]any{"base": 3}}))
	if !mk.OK {
		t.Fatalf("make: %+v", mk.Error)
	}
	var made struct {
		Handle int64 `msgpack:"handle"`
	}
	if err := msgpack.Unmarshal(mk.Result, &made); err != nil {
		t.Fatal(err)
	}
	rawCall(t, bad, 101, mp(map[string]any{"op": "reset", "handle": made.Handle}))
	acts := func(dtype envs.DType, rows int, vals ...int64) wire.Array {
		a := envs.Array{DType: envs.Int64, Ints: vals}
		return wire.EncodeArray(a, dtype, []int{rows, len(vals) / rows})
	}
	for i, tc := range []struct {
		name     string
		a        wire.Array
		wantCopy int
	}{
		{"wrong dtype", acts(envs.Int32, 2, 0, 0, 0, 0, 0, 0), -1},
		{"wrong shape", acts(envs.Int64, 1, 0, 0, 0), -1},
		{"char out of range", acts(envs.Int64, 2, 0, 0, 0, 1, 1, 3), 1},
	} {
		r := rawCall(t, bad, uint64(200+i), mp(map[string]any{"op": "step", "handle": made.Handle, "actions": tc.a}))
		if r.OK || r.Error.Copy != tc.wantCopy || r.Error.Fatal {
			t.Errorf("%s: %+v, want a non-fatal error on copy %d", tc.name, r.Error, tc.wantCopy)
		}
	}
	// The well-behaved client was served throughout.
	ctx := testCtx(t, 10*time.Second)
	if _, _, err := good.Reset(ctx, envs.ResetRequest{}); err != nil {
		t.Fatalf("good client after bad messages: %v", err)
	}
	if _, err := good.Step(ctx, envs.NewBatch(good.ActionSpace(), 2)); err != nil {
		t.Fatalf("good client step: %v", err)
	}
}

// TestRemoteErrors: unknown ids, refused imports, bad actions and env exceptions name what and where.
func TestRemoteErrors(t *testing.T) {
	needServer(t)
	srv, err := StartServer(testCtx(t, 60*time.Second), ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ctx := testCtx(t, 30*time.Second)
	for _, tc := range []struct{ id, wantType string }{
		{"NoSuchEnv-v9", "UnknownEnv"},
		{"python_server.testing_envs:CrashEnv", "ImportRefused"},
		{"os:system", "ImportRefused"},
	} {
		_, err := Dial(ctx, Config{EnvID: tc.id, NumEnvs: 1}, srv.Endpoint)
		var re *RemoteError
		if !errors.As(err, &re) || re.Type != tc.wantType || re.Op != "make" {
			t.Errorf("make %q: %v, want RemoteError %s", tc.id, err, tc.wantType)
		}
	}

	// Go-side validation names the copy and sends nothing.
	e := startEnv(t, Config{EnvID: "Copy-v0", NumEnvs: 3, Kwargs: map[string]any{"base": 3}}, 1, ServerOptions{})
	if _, _, err := e.Reset(ctx, envs.ResetRequest{}); err != nil {
		t.Fatal(err)
	}
	good := envs.NewBatch(e.ActionSpace(), 3)
	bad := good.Clone()
	bad.Ints[2*3+2] = 3 // copy 2: char 3 >= base
	floats := envs.NewArray(envs.Float64, 3, 3)
	short := envs.NewBatch(e.ActionSpace(), 2)
	for _, tc := range []struct {
		name string
		a    envs.Array
		want string
	}{
		{"range", bad, "copy 2"},
		{"dtype", floats, "dtype float64"},
		{"shape", short, "shape [2 3]"},
	} {
		if _, err := e.Step(ctx, tc.a); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := e.Step(ctx, good); err != nil {
		t.Fatalf("good step after refused ones: %v", err)
	}

	// An exception in env.step: the copy is named (as a global index over two servers), with a traceback.
	c := startEnv(t, Config{EnvID: "python_server.testing_envs:CrashEnv", NumEnvs: 4}, 2, ServerOptions{AllowImports: true})
	if _, _, err := c.Reset(ctx, envs.ResetRequest{}); err != nil {
		t.Fatal(err)
	}
	a := envs.NewBatch(c.ActionSpace(), 4)
	a.Ints[3] = 1
	_, err = c.Step(ctx, a)
	var re *RemoteError
	if !errors.As(err, &re) || re.Copy != 3 || !re.Fatal || re.Type != "RuntimeError" || !strings.Contains(re.Traceback, "boom") {
		t.Fatalf("crash: %#v", err)
	}
	if _, err := c.Step(ctx, envs.NewBatch(c.ActionSpace(), 4)); err == nil {
		t.Fatal("step after a fatal error succeeded")
	}
}

// TestServerExitsWithClient: a client killed before it can Close (SIGKILL) takes its server with it,
// and the server removes the socket and its directory on the way out.
func TestServerExitsWithClient(t *testing.T) {
	if os.Getenv("BRIDGE_ORPHAN_HELPER") == "1" {
		// The client: start a server, say its pid, wait to be killed.
		s, err := StartServer(context.Background(), ServerOptions{})
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println(s.Pid(), filepath.Dir(strings.TrimPrefix(s.Endpoint, "ipc://")))
		time.Sleep(time.Minute)
		os.Exit(1)
	}
	needServer(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestServerExitsWithClient$")
	cmd.Env = append(os.Environ(), "BRIDGE_ORPHAN_HELPER=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	pidStr, dir, _ := strings.Cut(strings.TrimSpace(line), " ")
	pid, err := strconv.Atoi(pidStr)
	if err != nil || dir == "" {
		t.Fatalf("helper said %q", line)
	}
	if !processAlive(pid) {
		t.Fatalf("server %d is not running while its client is", pid)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for processAlive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("server %d still running 10 s after its client was killed", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket dir %s after the server exited: %v, want it gone", dir, err)
	}
}

// processAlive reports whether pid runs (a zombie nobody has reaped yet counts as gone).
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	// The state follows the parenthesised command name.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
