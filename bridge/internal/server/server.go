// Package server starts and stops sparsepcl's Python env server (python -m python_server) as a child
// process: a fresh ipc endpoint in a directory of its own (or a given one, with the credential file
// it passes on), the ready handshake on stdout, the kill on Close or when the start's context is
// cancelled, the tail of its stderr for error messages, and the sweep of socket directories that
// clients killed before they could clean up left behind. It knows nothing of the messages the
// server speaks once it is ready (the bridge checks the protocol version the handshake reports).
package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sparsepcl/sparsepcl/bridge/auth"
)

// Options says how to start a local server process.
type Options struct {
	// Python is the interpreter. Empty: $SPARSEPCL_PYTHON, else <Root>/.venv/bin/python if it exists, else python3.
	Python string
	// Root is the directory holding python_server/. Empty: $SPARSEPCL_ROOT, else the nearest ancestor
	// of the working directory that holds python_server/__main__.py.
	Root string
	// AllowImports lets the server make "module:Class" env ids.
	AllowImports bool
	// EnvModules are Python modules the server imports before serving: user packages that
	// register Gymnasium ids. They must be on the interpreter's path (PYTHONPATH is inherited).
	EnvModules []string
	// AllowRender lets clients make envs with render modes that may need a display (e.g. "human"):
	// without a display such an env can abort the whole server.
	AllowRender bool
	// Quotas of the server (0: its defaults of 64 env groups and 1024 copies per client, 4096 copies
	// in all, 32 requests queued per client); see PROTOCOL.md.
	MaxGroupsPerClient, MaxCopiesPerClient, MaxCopies, MaxInflight int
	// IdleTimeout closes the envs of a silent client (0: the server's default of 300 s; <0: never).
	IdleTimeout time.Duration
	// MaxMessageBytes caps requests on the server (0: the server's default of 64 MiB).
	MaxMessageBytes int
	// StartTimeout bounds the wait for the ready handshake (0: 60 s).
	StartTimeout time.Duration
	// Stderr receives the server's stderr (nil: kept only as a tail for error messages).
	Stderr io.Writer
	// Bind is the endpoint to listen on (empty: a fresh ipc endpoint in a directory of its own),
	// e.g. tcp://127.0.0.1:0 for a free loopback port. The server refuses to bind beyond loopback
	// without AuthFile.
	Bind string
	// AuthFile is a credential file (see package bridge/auth): the server then requires ZeroMQ PLAIN
	// with its user and password from every client. Empty: none; the server never takes
	// $SPARSEPCL_AUTH_FILE from the caller's environment, only from here.
	AuthFile string
}

// Server is a server process started by this package.
type Server struct {
	// Endpoint is the address the server listens on: the fresh ipc:// one, or Options.Bind as the
	// server resolved it (a tcp port 0 replaced by the port it got).
	Endpoint string
	// Protocol is the protocol version the server's ready handshake reported.
	Protocol int
	cmd      *exec.Cmd
	dir      string
	exited   chan struct{}
	waitErr  error
	tail     *tailBuffer
	stopOnce sync.Once
	stopCtx  chan struct{}
	// anyEndpoint: the endpoint was given (Options.Bind), and the ready line says what it resolved to.
	anyEndpoint bool
}

// withoutEnv is env without the variable name.
func withoutEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// FindRoot returns the directory holding python_server/ (see ServerOptions.Root).
func FindRoot() (string, error) {
	if r := os.Getenv("SPARSEPCL_ROOT"); r != "" {
		return r, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("bridge: find python_server: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "python_server", "__main__.py")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("bridge: no python_server/ in the working directory or its parents (set SPARSEPCL_ROOT)")
		}
		dir = parent
	}
}

// FindPython returns the interpreter to run the server with (see ServerOptions.Python).
func FindPython(root string) string {
	if p := os.Getenv("SPARSEPCL_PYTHON"); p != "" {
		return p
	}
	venv := filepath.Join(root, ".venv", "bin", "python")
	if _, err := os.Stat(venv); err == nil {
		return venv
	}
	return "python3"
}

// Start starts a server on a fresh ipc endpoint and waits for its ready handshake. The process is
// killed by Close, or when ctx is cancelled.
func Start(ctx context.Context, opts Options) (*Server, error) {
	root := opts.Root
	if root == "" {
		r, err := FindRoot()
		if err != nil {
			return nil, err
		}
		root = r
	}
	python := opts.Python
	if python == "" {
		python = FindPython(root)
	}
	sweepStale(os.TempDir())
	endpoint, dir := opts.Bind, ""
	if endpoint == "" {
		// The directory's name holds this process's pid, so a later start can tell whether it is stale.
		d, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", socketDirPrefix, os.Getpid()))
		if err != nil {
			return nil, fmt.Errorf("bridge: temp dir for the server socket: %w", err)
		}
		endpoint, dir = "ipc://"+filepath.Join(d, socketName), d
	}
	cmd := exec.Command(python, opts.args(endpoint, dir != "")...)
	cmd.Dir = root
	// The project's root first (python_server itself), then the caller's PYTHONPATH: where a
	// user's env packages (EnvModules, module:Class ids) are found.
	pythonPath := root
	if p := os.Getenv("PYTHONPATH"); p != "" {
		pythonPath += string(os.PathListSeparator) + p
	}
	// The credential file is only ever the one Options names (--auth-file): a $SPARSEPCL_AUTH_FILE
	// meant for dialling remote servers must not lock the client out of the servers it starts.
	cmd.Env = append(withoutEnv(os.Environ(), auth.EnvVar), "PYTHONUNBUFFERED=1", "PYTHONPATH="+pythonPath)
	cmd.SysProcAttr = procAttr()
	s := &Server{Endpoint: endpoint, cmd: cmd, dir: dir, exited: make(chan struct{}), tail: &tailBuffer{max: 8 << 10}, stopCtx: make(chan struct{}), anyEndpoint: opts.Bind != ""}
	var errw io.Writer = s.tail
	if opts.Stderr != nil {
		errw = io.MultiWriter(s.tail, opts.Stderr)
	}
	cmd.Stderr = errw
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("bridge: server stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("bridge: start server %s: %w", python, err)
	}
	if err := s.awaitReady(ctx, stdout, opts.StartTimeout); err != nil {
		s.Close()
		return nil, fmt.Errorf("bridge: start server (%s -m python_server in %s): %w", python, root, err)
	}
	return s, nil
}

// args are the server's command-line arguments for binding endpoint (ownDir: in a directory made
// for it, which it removes on exit).
func (opts Options) args(endpoint string, ownDir bool) []string {
	// --exit-with-parent: a client killed without a chance to Close still takes its server with it,
	// and --remove-dir has that server remove the socket and its directory on the way out.
	args := []string{"-m", "python_server", "--bind", endpoint, "--exit-with-parent"}
	if ownDir {
		args = append(args, "--remove-dir")
	}
	if opts.AuthFile != "" {
		args = append(args, "--auth-file", opts.AuthFile)
	}
	if opts.AllowImports {
		args = append(args, "--allow-imports")
	}
	for _, m := range opts.EnvModules {
		args = append(args, "--env-module", m)
	}
	if opts.AllowRender {
		args = append(args, "--allow-render")
	}
	for _, q := range []struct {
		flag string
		v    int
	}{{"--max-groups-per-client", opts.MaxGroupsPerClient}, {"--max-copies-per-client", opts.MaxCopiesPerClient}, {"--max-copies", opts.MaxCopies}, {"--max-inflight", opts.MaxInflight}} {
		if q.v > 0 {
			args = append(args, q.flag, strconv.Itoa(q.v))
		}
	}
	switch {
	case opts.IdleTimeout < 0:
		args = append(args, "--idle-timeout", "0")
	case opts.IdleTimeout > 0:
		args = append(args, "--idle-timeout", strconv.FormatFloat(opts.IdleTimeout.Seconds(), 'f', -1, 64))
	}
	if opts.MaxMessageBytes > 0 {
		args = append(args, "--max-message-bytes", strconv.Itoa(opts.MaxMessageBytes))
	}
	return args
}

// awaitReady watches the started server: it reads the ready handshake from stdout, records the
// exit, kills the server when ctx ends, and waits for the handshake up to timeout (0: 60 s).
func (s *Server) awaitReady(ctx context.Context, stdout io.Reader, timeout time.Duration) error {
	ready := make(chan error, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, err := r.ReadString('\n')
		if err != nil {
			ready <- fmt.Errorf("no ready handshake: %w", err)
		} else {
			ready <- s.checkHandshake(line)
		}
		_, _ = io.Copy(io.Discard, r)
	}()
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	go func() { // kill on context cancel
		select {
		case <-ctx.Done():
			s.Kill()
		case <-s.stopCtx:
		case <-s.exited:
		}
	}()
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err := <-ready:
		if err == nil {
			return nil
		}
		// Its stdout closed without the handshake: a server that stopped on its own (a bad flag,
		// an --env-module that does not import) says why on stderr, which its exit error carries.
		select {
		case <-s.exited:
			return fmt.Errorf("server exited before it was ready: %w", s.ExitErr())
		case <-time.After(5 * time.Second):
			return err
		}
	case <-s.exited:
		return fmt.Errorf("server exited before it was ready: %w", s.ExitErr())
	case <-timer.C:
		return fmt.Errorf("no ready handshake within %v", timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// checkHandshake reads the ready line and records the protocol version it reports.
func (s *Server) checkHandshake(line string) error {
	var h struct {
		Ready    bool   `json:"ready"`
		Protocol int    `json:"protocol"`
		Endpoint string `json:"endpoint"`
	}
	if err := json.Unmarshal([]byte(line), &h); err != nil {
		return fmt.Errorf("bad ready handshake %q: %w", line, err)
	}
	if !h.Ready || (h.Endpoint != s.Endpoint && !s.anyEndpoint) {
		return fmt.Errorf("bad ready handshake %q", line)
	}
	s.Protocol = h.Protocol
	if s.anyEndpoint {
		s.Endpoint = h.Endpoint
	}
	return nil
}

// Pid is the server's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Exited closes when the process has exited.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// ExitErr describes how the process ended, with the last lines of its stderr; call it once Exited
// is closed.
func (s *Server) ExitErr() error {
	return fmt.Errorf("server process exited (%v); last lines of its stderr:\n%s", s.waitErr, lastLines(s.tail.String(), stderrLines, 6<<10))
}

// stderrLines is how many of the last lines of a dead server's stderr its errors carry.
const stderrLines = 40

// lastLines returns the last n lines of s, at most max bytes of them.
func lastLines(s string, n, max int) string {
	s = strings.TrimRight(s, "\n")
	for i, k := len(s), 0; i > 0; i-- {
		if s[i-1] == '\n' {
			if k++; k == n {
				s = s[i:]
				break
			}
		}
	}
	if len(s) > max {
		s = "..." + s[len(s)-max:]
	}
	return s
}

const (
	socketDirPrefix = "sparsepcl-bridge-"
	socketName      = "env.sock"
	// legacyStaleAge: a socket directory without an owner pid in its name (made by an older version)
	// is swept only when it is at least this old and nothing listens on its socket.
	legacyStaleAge = 10 * time.Minute
)

// sweepStale, run at every Start, removes the socket directories that Start made in tmp for clients that are gone (a
// client killed with SIGKILL cannot remove its own, and neither can its server if it died too):
// those whose owner process no longer runs, or, for names without an owner, that are old, and in
// either case only when nothing listens on their socket any more. Best effort.
func sweepStale(tmp string) {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, ent := range entries {
		name := ent.Name()
		if !ent.IsDir() || !strings.HasPrefix(name, socketDirPrefix) {
			continue
		}
		dir := filepath.Join(tmp, name)
		info, err := ent.Info()
		if err != nil || !ownedByUs(info) {
			continue
		}
		rest := strings.TrimPrefix(name, socketDirPrefix)
		pidStr, _, hasOwner := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		switch {
		case hasOwner && err == nil && pid > 0:
			if pid == os.Getpid() || processRuns(pid) {
				continue
			}
		case time.Since(info.ModTime()) < legacyStaleAge:
			continue
		}
		if listening(filepath.Join(dir, socketName)) {
			continue
		}
		_ = os.RemoveAll(dir)
	}
}

// listening reports whether something accepts connections on the unix socket at path.
func listening(path string) bool {
	c, err := net.DialTimeout("unix", path, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// Kill kills the process at once (SIGKILL to its process group); Close still has to be called.
func (s *Server) Kill() {
	if s.cmd.Process != nil {
		_ = killGroup(s.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// Close stops the server (SIGTERM, then SIGKILL after 2 s), waits for it and removes its socket directory.
func (s *Server) Close() error {
	s.stopOnce.Do(func() {
		close(s.stopCtx)
		if s.cmd.Process != nil {
			_ = killGroup(s.cmd.Process.Pid, syscall.SIGTERM)
		}
		select {
		case <-s.exited:
		case <-time.After(2 * time.Second):
			s.Kill()
			<-s.exited
		}
		if s.dir != "" {
			os.RemoveAll(s.dir)
		}
	})
	return nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
