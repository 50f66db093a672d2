package bridge

import (
	"bytes"
	"context"
	"errors"
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

// TestStreamFramingWithZmq4Router sends messages framed by writeMessage to a zmq4 ROUTER, whose own
// ZMTP reader must see the same frames: short, empty and long (> 255 bytes, 8-byte length) ones.
func TestStreamFramingWithZmq4Router(t *testing.T) {
	ctx := testCtx(t, 20*time.Second)
	endpoint := "ipc://" + filepath.Join(t.TempDir(), "r.sock")
	router := zmq4.NewRouter(context.Background())
	defer router.Close()
	if err := router.Listen(endpoint); err != nil {
		t.Fatal(err)
	}
	stream, zc, err := openStream(ctx, endpoint)
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
		if err := stream.writeMessage(frames...); err != nil {
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
		// And the echo comes back through zmq4's reader over the buffered stream (read concurrently:
		// a long message does not fit the socket buffer).
		echo := make(chan zmq4.Msg, 1)
		go func() {
			back, err := zc.RecvMsg()
			if err != nil {
				back.Frames = nil
			}
			echo <- back
		}()
		if err := router.Send(zmq4.NewMsgFrom(got.Frames...)); err != nil {
			t.Fatal(err)
		}
		back := <-echo
		if len(back.Frames) != len(frames) {
			t.Fatalf("echo: got %d frames, want %d", len(back.Frames), len(frames))
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
		_, _, err := openStream(testCtx(t, 20*time.Second), "ipc://"+filepath.Join(dir, "none.sock"))
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
		_, _, err = openStream(ctx, "ipc://"+path)
		if err == nil || !strings.Contains(err.Error(), "handshake") {
			t.Fatalf("got %v, want a handshake error", err)
		}
	})
	t.Run("bad endpoint", func(t *testing.T) {
		_, _, err := openStream(context.Background(), "udp://127.0.0.1:1")
		if err == nil || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want an endpoint error", err)
		}
	})
}
