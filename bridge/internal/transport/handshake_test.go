package transport

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/bridge/auth"
)

// TestRefusal reads what a server answered a PLAIN HELLO with.
func TestRefusal(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
		code string
		ok   bool
	}{
		{"libzmq 4.3.5's ERROR", []byte("\x04\x09^RROR\x03400"), " (ZMTP ERROR 400)", true},
		{"a well-formed ERROR", []byte("\x04\x0a\x05ERROR\x03400"), " (ZMTP ERROR 400)", true},
		{"an ERROR without a code", []byte("\x04\x06\x05ERROR"), "", true},
		{"WELCOME", []byte("\x04\x08\x07WELCOME"), "", false},
		{"a message, not a command", []byte("\x00\x03abc"), "", false},
		{"cut short", []byte("\x04\x0a\x05ERR"), "", false},
		{"nothing", nil, "", false},
	}
	for _, tt := range tests {
		code, ok := refusal(tt.b)
		if code != tt.code || ok != tt.ok {
			t.Errorf("%s: refusal = %q, %v; want %q, %v", tt.name, code, ok, tt.code, tt.ok)
		}
	}
}

// greetingWith is a ZMTP 3.0 server greeting with the given mechanism.
func greetingWith(mech string) []byte {
	g := make([]byte, greetingLen)
	g[0], g[9], g[10] = 0xff, 0x7f, 3
	copy(g[mechanismOff:], mech)
	g[32] = 1
	return g
}

// TestHandshakeRefusals: against fake servers, a dial fails within its deadline with an error that
// names the endpoint and says what the server wanted (a mechanism the bridge does not speak), or
// that it said nothing.
func TestHandshakeRefusals(t *testing.T) {
	creds := &auth.Credentials{User: "u", Password: "secret"}
	tests := []struct {
		name  string
		serve func(net.Conn) // what the fake server does with a connection
		creds *auth.Credentials
		want  string
		auth  bool // wraps ErrAuth
	}{
		{"a CURVE server", func(c net.Conn) { _, _ = c.Write(greetingWith("CURVE")); _, _ = io.Copy(io.Discard, c) }, creds, `speaks security mechanism "CURVE"`, true},
		{"a silent server", func(c net.Conn) { _, _ = io.Copy(io.Discard, c) }, creds, "no complete answer in time", false},
		{"a silent server, no credentials", func(c net.Conn) { _, _ = io.Copy(io.Discard, c) }, nil, "no complete answer in time", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					go func() { defer c.Close(); tt.serve(c) }()
				}
			}()
			endpoint := "tcp://" + ln.Addr().String()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			start := time.Now()
			_, err = openStream(ctx, endpoint, tt.creds)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), endpoint) || errors.Is(err, ErrAuth) != tt.auth {
				t.Fatalf("err = %v; want one naming %s and saying %q (ErrAuth: %v)", err, endpoint, tt.want, tt.auth)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v past a 1 s deadline", d)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}
