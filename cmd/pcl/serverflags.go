package main

import (
	"flag"

	"github.com/sparsepcl/sparsepcl/bridge"
)

// serverFlags say what a local env server, started for an id that is not Go-native, may import:
// the user's Gymnasium envs.
type serverFlags struct {
	allowImports *bool
	modules      stringList
}

// register adds --allow-imports and --env-module to fs.
func (f *serverFlags) register(fs *flag.FlagSet) {
	f.allowImports = fs.Bool("allow-imports", false, "let the env server make module:Class env ids, importing the module (run only code you trust)")
	fs.Var(&f.modules, "env-module", "Python `package` the env server imports before serving, to register your Gymnasium ids (repeatable; it must be on the server's PYTHONPATH)")
}

// options are the server options the flags set.
func (f *serverFlags) options() bridge.ServerOptions {
	return bridge.ServerOptions{AllowImports: *f.allowImports, EnvModules: f.modules}
}
