package bridge

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/bridge/auth"
	"github.com/sparsepcl/sparsepcl/envs"
)

// syncBuffer is a bytes.Buffer safe for the server's stderr copier and the test at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// authServer starts a real server on a free tcp loopback port requiring the credentials of a fresh
// file, and returns it, the credentials and its stderr.
func authServer(t *testing.T) (*Server, auth.Credentials, *syncBuffer) {
	t.Helper()
	needServer(t)
	file := filepath.Join(t.TempDir(), "auth.json")
	creds, err := auth.New(file)
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	s, err := StartServer(testCtx(t, 60*time.Second), ServerOptions{Bind: "tcp://127.0.0.1:0", AuthFile: file, Stderr: stderr})
	if err != nil {
		t.Fatalf("start a server with credentials: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, creds, stderr
}

// TestAuthRefusals: a server with credentials on tcp serves the right credential, refuses a wrong
// one and a missing one, each with its message naming the endpoint and within a deadline, logs each
// refusal, and keeps serving; a client with credentials is told when the server takes none.
func TestAuthRefusals(t *testing.T) {
	srv, good, stderr := authServer(t)
	bad := good
	bad.Password += "x"
	wrongUser := good
	wrongUser.User = "someone-else"
	open := startTCPServer(t)
	tests := []struct {
		name     string
		endpoint string
		creds    *auth.Credentials
		want     string // "" : it works
		log      string // what the server logs, "" : nothing asked
	}{
		{"right credential", srv.Endpoint, &good, "", ""},
		{"wrong password", srv.Endpoint, &bad, "the server refused the credentials", "refused a client from 127.0.0.1: wrong user or password"},
		{"wrong user", srv.Endpoint, &wrongUser, "the server refused the credentials", "refused a client from 127.0.0.1: wrong user or password"},
		{"missing credential", srv.Endpoint, nil, "the server requires credentials (ZeroMQ PLAIN) and none were given", "refused a connection to " + srv.Endpoint},
		{"credential to a server without", open.Endpoint, &good, "credentials were given but the server takes none", ""},
		{"right credential after the refusals", srv.Endpoint, &good, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			e, err := Dial(testCtx(t, 30*time.Second), Config{EnvID: "CartPole-v1", NumEnvs: 2, Credentials: tt.creds}, tt.endpoint)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Dial with the right credential: %v", err)
				}
				defer e.Close()
				if _, _, err := e.Reset(testCtx(t, 30*time.Second), envs.ResetRequest{}); err != nil {
					t.Fatal(err)
				}
				acts := envs.NewBatch(e.ActionSpace(), 2)
				if _, err := e.Step(testCtx(t, 30*time.Second), acts); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				e.Close()
				t.Fatalf("Dial succeeded, want a refusal (%s)", tt.want)
			}
			if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.endpoint) {
				t.Errorf("err = %v\nwant ErrAuth saying %q and naming %s", err, tt.want, tt.endpoint)
			}
			t.Logf("refused: %v", err)
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("the refusal took %v", d)
			}
			for _, secret := range []string{good.Password, bad.Password} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error shows a password: %v", err)
				}
			}
			if tt.log != "" {
				waitFor(t, 5*time.Second, func() bool { return strings.Contains(stderr.String(), tt.log) }, "server log line "+tt.log+"\nlog:\n"+stderr.String())
			}
		})
	}
	if strings.Contains(stderr.String(), good.Password) || strings.Contains(stderr.String(), bad.Password) {
		t.Errorf("the server logged a password:\n%s", stderr.String())
	}
}

// startTCPServer starts a real server without credentials on a free tcp loopback port.
func startTCPServer(t *testing.T) *Server {
	t.Helper()
	s, err := StartServer(testCtx(t, 60*time.Second), ServerOptions{Bind: "tcp://127.0.0.1:0"})
	if err != nil {
		t.Fatalf("start a server on tcp loopback: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestOpenBindRefused: the real server refuses to listen beyond loopback without credentials (and
// says how to fix it), and listens there with them.
func TestOpenBindRefused(t *testing.T) {
	needServer(t)
	_, err := StartServer(testCtx(t, 60*time.Second), ServerOptions{Bind: "tcp://0.0.0.0:0"})
	if err == nil {
		t.Fatal("the server listened on tcp://0.0.0.0 without credentials")
	}
	for _, want := range []string{"refusing to bind tcp://0.0.0.0:0", "--auth-file", "--insecure"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v\nwant it to say %q", err, want)
		}
	}
	file := filepath.Join(t.TempDir(), "auth.json")
	if _, err := auth.New(file); err != nil {
		t.Fatal(err)
	}
	s, err := StartServer(testCtx(t, 60*time.Second), ServerOptions{Bind: "tcp://0.0.0.0:0", AuthFile: file})
	if err != nil {
		t.Fatalf("with credentials: %v", err)
	}
	s.Close()
}

// TestAuthFileNotPrivate: Start refuses a credential file that others may read before it starts
// anything.
func TestAuthFileNotPrivate(t *testing.T) {
	needServer(t)
	file := filepath.Join(t.TempDir(), "auth.json")
	if _, err := auth.New(file); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, 0o640); err != nil {
		t.Fatal(err)
	}
	_, err := Start(testCtx(t, 60*time.Second), Config{EnvID: "CartPole-v1", NumEnvs: 1}, 1, ServerOptions{Bind: "tcp://127.0.0.1:0", AuthFile: file})
	if !errors.Is(err, auth.ErrInsecureFile) || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("err = %v, want auth.ErrInsecureFile with the fix", err)
	}
}

func waitFor(t *testing.T, d time.Duration, ok func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
