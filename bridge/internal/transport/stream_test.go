package transport

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
)

func TestSplitEndpoint(t *testing.T) {
	tests := []struct {
		endpoint, network, addr string
		ok                      bool
	}{
		{"ipc:///tmp/x/env.sock", "unix", "/tmp/x/env.sock", true},
		{"tcp://127.0.0.1:5555", "tcp", "127.0.0.1:5555", true},
		{"tcp://", "", "", false},
		{"inproc://x", "", "", false},
		{"/tmp/env.sock", "", "", false},
	}
	for _, tt := range tests {
		network, addr, err := splitEndpoint(tt.endpoint)
		if (err == nil) != tt.ok || network != tt.network || addr != tt.addr {
			t.Errorf("splitEndpoint(%q) = %q, %q, %v", tt.endpoint, network, addr, err)
		}
	}
}

// TestStreamFramingWithZmq4Router sends messages framed by WriteMessage to a zmq4 ROUTER, whose own
// ZMTP reader must see the same frames: short, empty and long (> 255 bytes, 8-byte length) ones.
func TestStreamFramingWithZmq4Router(t *testing.T) {
	ctx := testCtx(t, 20*time.Second)
	endpoint := "ipc://" + filepath.Join(t.TempDir(), "r.sock")
	router := zmq4.NewRouter(context.Background())
	defer router.Close()
	if err := router.Listen(endpoint); err != nil {
		t.Fatal(err)
	}
	stream, err := openStream(ctx, endpoint, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	long := bytes.Repeat([]byte("0123456789"), 70_000)
	messages := [][][]byte{
		{[]byte("12345678"), []byte("payload")},
		{[]byte("id"), {}, long},
		{long},
	}
	for _, frames := range messages {
		if err := stream.WriteMessage(time.Now().Add(5*time.Second), frames...); err != nil {
			t.Fatal(err)
		}
		got, err := router.Recv()
		if err != nil {
			t.Fatal(err)
		}
		// The ROUTER prepends the peer's identity.
		if len(got.Frames) != len(frames)+1 {
			t.Fatalf("router got %d frames, want %d", len(got.Frames), len(frames)+1)
		}
		for i, f := range frames {
			if !bytes.Equal(got.Frames[i+1], f) {
				t.Fatalf("frame %d: got %d bytes, want %d", i, len(got.Frames[i+1]), len(f))
			}
		}
		// And the echo comes back through our reader (read concurrently: a long message does not
		// fit the socket buffer).
		echo := make(chan Message, 1)
		go func() {
			back, err := stream.ReadMessage(1 << 20)
			if err != nil {
				back.Frames = nil
			}
			echo <- back
		}()
		if err := router.Send(zmq4.NewMsgFrom(got.Frames...)); err != nil {
			t.Fatal(err)
		}
		back := <-echo
		if len(back.Frames) != len(frames) || back.Oversized != 0 {
			t.Fatalf("echo: got %d frames (oversized %d), want %d", len(back.Frames), back.Oversized, len(frames))
		}
		for i, f := range frames {
			if !bytes.Equal(back.Frames[i], f) {
				t.Fatalf("echo frame %d: got %d bytes, want %d", i, len(back.Frames[i]), len(f))
			}
		}
	}
}

func TestOpenStreamFailures(t *testing.T) {
	dir := t.TempDir()
	t.Run("nobody listening", func(t *testing.T) {
		start := time.Now()
		_, err := openStream(testCtx(t, 20*time.Second), "ipc://"+filepath.Join(dir, "none.sock"), nil)
		if err == nil || !strings.Contains(err.Error(), "none.sock") {
			t.Fatalf("got %v, want a dial error naming the endpoint", err)
		}
		if time.Since(start) < dialRetry/2 {
			t.Fatalf("gave up after %v, before retrying for %v", time.Since(start), dialRetry)
		}
	})
	t.Run("silent peer", func(t *testing.T) {
		// A listener that accepts but never greets: the handshake must end at the deadline.
		path := filepath.Join(dir, "silent.sock")
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			c, err := ln.Accept()
			if err == nil {
				defer c.Close()
				time.Sleep(5 * time.Second)
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err = openStream(ctx, "ipc://"+path, nil)
		if err == nil || !strings.Contains(err.Error(), "handshake") {
			t.Fatalf("got %v, want a handshake error", err)
		}
	})
	t.Run("bad endpoint", func(t *testing.T) {
		_, err := openStream(context.Background(), "udp://127.0.0.1:1", nil)
		if err == nil || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want an endpoint error", err)
		}
	})
}

// frame encodes one ZMTP frame.
func frame(flags byte, body []byte) []byte {
	if len(body) > 255 {
		return append(binary.BigEndian.AppendUint64([]byte{flags | flagLong}, uint64(len(body))), body...)
	}
	return append([]byte{flags, byte(len(body))}, body...)
}

func TestReadMessage(t *testing.T) {
	long := bytes.Repeat([]byte{7}, 300)
	cmd := func(name string, data []byte) []byte {
		return append(append([]byte{byte(len(name))}, name...), data...)
	}
	tests := []struct {
		name      string
		wire      [][]byte // frames as written by the peer
		limit     int
		frames    [][]byte
		oversized uint64
		reply     []byte // what the peer must receive back (a PONG)
		err       string
	}{
		{name: "two frames", wire: [][]byte{frame(flagMore, []byte("12345678")), frame(0, []byte("payload"))}, limit: 1 << 10,
			frames: [][]byte{[]byte("12345678"), []byte("payload")}},
		{name: "long and empty frames", wire: [][]byte{frame(flagMore, nil), frame(0, long)}, limit: 1 << 10,
			frames: [][]byte{{}, long}},
		{name: "frame over the limit is skipped", wire: [][]byte{frame(flagMore, []byte("12345678")), frame(0, long)}, limit: 100,
			frames: [][]byte{[]byte("12345678"), nil}, oversized: 300},
		{name: "ping is answered and skipped", wire: [][]byte{frame(flagCommand, cmd("PING", []byte{0, 10, 'c', 't', 'x'})), frame(0, []byte("m"))}, limit: 1 << 10,
			frames: [][]byte{[]byte("m")}, reply: frame(flagCommand, cmd("PONG", []byte("ctx")))},
		{name: "other commands are ignored", wire: [][]byte{frame(flagCommand, cmd("SUBSCRIBE", nil)), frame(0, []byte("m"))}, limit: 1 << 10,
			frames: [][]byte{[]byte("m")}},
		{name: "error command ends the stream", wire: [][]byte{frame(flagCommand, cmd("ERROR", []byte("\x03bad")))}, limit: 1 << 10,
			err: `ZMTP ERROR "bad"`},
		{name: "malformed command", wire: [][]byte{frame(flagCommand, []byte{9, 'x'})}, limit: 1 << 10, err: "malformed ZMTP command"},
		{name: "oversized command", wire: [][]byte{frame(flagCommand, append([]byte{4}, long...))}, limit: 100, err: "refusing a ZMTP frame"},
		{name: "absurd length", wire: [][]byte{{flagLong, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}, limit: 100, err: "refusing a ZMTP frame"},
		{name: "truncated", wire: [][]byte{frame(flagMore, []byte("12345678"))[:5]}, limit: 100, err: "EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ours, peer := net.Pipe()
			defer peer.Close()
			s := NewStream(ours)
			defer s.Close()
			go func() {
				for _, w := range tt.wire {
					if _, err := peer.Write(w); err != nil {
						return
					}
				}
				if tt.reply == nil {
					peer.Close()
				}
			}()
			got := make(chan []byte, 1)
			if tt.reply != nil {
				go func() {
					b := make([]byte, len(tt.reply))
					_, err := io.ReadFull(peer, b)
					if err != nil {
						b = nil
					}
					got <- b
				}()
			}
			m, err := s.ReadMessage(tt.limit)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want an error containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Oversized != tt.oversized || len(m.Frames) != len(tt.frames) {
				t.Fatalf("got %d frames (oversized %d), want %d (oversized %d)", len(m.Frames), m.Oversized, len(tt.frames), tt.oversized)
			}
			for i := range tt.frames {
				if !bytes.Equal(m.Frames[i], tt.frames[i]) || (m.Frames[i] == nil) != (tt.frames[i] == nil) {
					t.Errorf("frame %d = %q, want %q", i, m.Frames[i], tt.frames[i])
				}
			}
			if tt.reply != nil {
				if r := <-got; !bytes.Equal(r, tt.reply) {
					t.Errorf("peer got %q, want %q", r, tt.reply)
				}
			}
		})
	}
}

func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
