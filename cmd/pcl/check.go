package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/envcheck"
	"github.com/sparsepcl/sparsepcl/envs/registry"
	"github.com/sparsepcl/sparsepcl/internal/envmaker"
)

// errCheckFailed is a check that ran and found rules broken (exit 1, the report says which).
var errCheckFailed = errors.New("the env breaks the contract")

// runCheck checks an env against the contract the learner and the bridge rely on (envcheck).
func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("check ENV", stderr)
	remote := fs.Bool("remote", false, "check the Gymnasium original through the Python server even when a Go-native version exists")
	seed := fs.Int64("seed", 0, "seed of the resets and the random actions")
	steps := fs.Int("steps", 500, "random steps per rollout")
	var servers stringList
	fs.Var(&servers, "server", "`endpoint` of a running env server (tcp://host:port), repeatable (default: start one)")
	var server serverFlags
	server.register(fs)
	if len(args) == 0 || args[0] == "" || args[0][0] == '-' {
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		return usageError{fmt.Errorf("give the env id: pcl check ENV [flags] (pcl list shows the Go-native ones)")}
	}
	id := args[0]
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if *steps < 1 {
		return usageError{fmt.Errorf("--steps %d: want >= 1", *steps)}
	}
	creds, err := server.credentials(servers)
	if err != nil {
		return err
	}
	maker := &envmaker.Maker{Registry: registry.Default(), Servers: servers, Credentials: creds, ForceRemote: *remote, Server: server.options()}
	newEnv := func(ctx context.Context, copies int, mode envs.AutoresetMode) (envs.VecEnv, error) {
		return maker.MakeVec(ctx, envs.VecRequest{ID: id, Copies: copies, Autoreset: mode})
	}
	report := envcheck.Check(ctx, id, newEnv, envcheck.Options{Seed: *seed, Steps: *steps})
	if first := report.Results[0]; errors.Is(first.Err, envmaker.ErrUnknownEnv) {
		return usageError{first.Err}
	}
	fmt.Fprintf(stdout, "%s", report)
	if failed := report.Failed(); len(failed) > 0 {
		return fmt.Errorf("%s: %d of %d rules broken: %w", id, len(failed), len(report.Results), errCheckFailed)
	}
	fmt.Fprintf(stdout, "%s keeps every rule\n", id)
	return nil
}
