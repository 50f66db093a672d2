package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/sparsepcl/sparsepcl/bridge/auth"
)

const authUsage = `usage: pcl auth new FILE

  new     make FILE, a credential file with a random user and password (mode 0600; never overwrites)

Env servers reachable from other machines require one: give the same file to the servers
(python -m python_server --bind tcp://0.0.0.0:PORT --auth-file FILE) and to pcl (--auth-file FILE,
or SPARSEPCL_AUTH_FILE=FILE). Copy it to other nodes with scp or a shared home directory, never on a
command line. ZeroMQ PLAIN authenticates but does not encrypt: see docs/bridge.md.
`

// runAuth dispatches `pcl auth new FILE` (logic in bridge/auth).
func runAuth(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{errors.New("auth: give a subcommand: new FILE (run 'pcl auth -h')")}
	}
	switch args[0] {
	case "new":
		fs := newFlagSet("auth new FILE", stderr)
		if err := parseFlagsAndArgs(fs, args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return usageError{errors.New("auth new: give one FILE to write")}
		}
		path := fs.Arg(0)
		c, err := auth.New(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s: %s, mode 0600\n", path, c)
		fmt.Fprintf(stdout, "servers: python -m python_server --bind tcp://0.0.0.0:PORT --auth-file %s\nlearner: pcl train --server tcp://HOST:PORT --auth-file %s ...\n", path, path)
		return nil
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stderr, authUsage)
		return flag.ErrHelp
	}
	return usageError{fmt.Errorf("auth: unknown subcommand %q (new)", args[0])}
}
