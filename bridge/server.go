package bridge

import (
	"context"
	"fmt"

	"github.com/sparsepcl/sparsepcl/bridge/auth"
	"github.com/sparsepcl/sparsepcl/bridge/internal/server"
)

// ServerOptions says how to start a local server process.
type ServerOptions = server.Options

// Server is a server process started by StartServer (or Start).
type Server = server.Server

// StartServer starts a server on a fresh ipc endpoint (or opts.Bind), waits for its ready handshake
// and checks that it speaks ProtocolVersion. The process is killed by Close, or when ctx is
// cancelled.
func StartServer(ctx context.Context, opts ServerOptions) (*Server, error) {
	s, err := server.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	if s.Protocol != ProtocolVersion {
		s.Close()
		return nil, fmt.Errorf("bridge: start server: %s speaks protocol %d, this client %d", s.Endpoint, s.Protocol, ProtocolVersion)
	}
	return s, nil
}

// FindRoot returns the directory holding python_server/ (see ServerOptions.Root).
func FindRoot() (string, error) { return server.FindRoot() }

// FindPython returns the interpreter to run the server with (see ServerOptions.Python).
func FindPython(root string) string { return server.FindPython(root) }

// serverCredentials are the credentials servers started with opts ask of their clients: those of
// opts.AuthFile, nil without one.
func serverCredentials(opts ServerOptions) (*auth.Credentials, error) {
	if opts.AuthFile == "" {
		return nil, nil
	}
	c, err := auth.Load(opts.AuthFile)
	if err != nil {
		return nil, fmt.Errorf("bridge: start server: %w", err)
	}
	return &c, nil
}
