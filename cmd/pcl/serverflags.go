package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/sparsepcl/sparsepcl/bridge"
	"github.com/sparsepcl/sparsepcl/bridge/auth"
)

// serverFlags say what a local env server, started for an id that is not Go-native, may import:
// the user's Gymnasium envs; and with which credentials running servers (--server) are dialled.
type serverFlags struct {
	allowImports *bool
	modules      stringList
	authFile     *string
}

// register adds --allow-imports, --env-module and --auth-file to fs.
func (f *serverFlags) register(fs *flag.FlagSet) {
	f.allowImports = fs.Bool("allow-imports", false, "let the env server make module:Class env ids, importing the module (run only code you trust)")
	fs.Var(&f.modules, "env-module", "Python `package` the env server imports before serving, to register your Gymnasium ids (repeatable; it must be on the server's PYTHONPATH)")
	f.authFile = fs.String("auth-file", "", "credential `file` for the --server endpoints (ZeroMQ PLAIN, mode 0600, made by 'pcl auth new FILE'; default $"+auth.EnvVar+")")
}

// options are the server options the flags set.
func (f *serverFlags) options() bridge.ServerOptions {
	return bridge.ServerOptions{AllowImports: *f.allowImports, EnvModules: f.modules}
}

// credentials are those of --auth-file, else of $SPARSEPCL_AUTH_FILE, for dialling servers; nil
// when neither names a file or there are no servers to dial (the servers pcl starts itself listen
// on ipc and take none).
func (f *serverFlags) credentials(servers []string) (*auth.Credentials, error) {
	path := *f.authFile
	if len(servers) == 0 {
		if path != "" {
			return nil, usageError{errors.New("--auth-file is for --server endpoints: the env servers pcl starts itself listen on ipc and take no credentials")}
		}
		return nil, nil
	}
	if path == "" {
		path = os.Getenv(auth.EnvVar)
	}
	if path == "" {
		return nil, nil
	}
	c, err := auth.Load(path)
	if err != nil {
		return nil, fmt.Errorf("--server credentials: %w", err)
	}
	return &c, nil
}
