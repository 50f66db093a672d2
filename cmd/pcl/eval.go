package main

import (
	"context"
	"fmt"
	"io"

	"github.com/sparsepcl/sparsepcl/agent/provenance"
	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/envs/registry"
	"github.com/sparsepcl/sparsepcl/internal/envmaker"
)

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("eval", stderr)
	dir := fs.String("run", "", "run `directory` written by pcl train")
	n := fs.Int("episodes", 400, "greedy episodes at the trained level (and at each curriculum level with --per-length)")
	seed := fs.Int64("seed", 12345, "seed of the evaluation episodes")
	perLength := fs.Bool("per-length", true, "also report the greedy reward at every curriculum level up to the top")
	record := fs.String("record", "", "long-episode runs: also play one greedy episode (seed --seed) and write it as an animated GIF to this `file`")
	returns := fs.String("returns", "", "long-episode runs: also write the greedy returns (one per episode, with their mean) as JSON to this `file`")
	var servers stringList
	fs.Var(&servers, "server", "`endpoint` of a running env server (tcp://host:port), repeatable (runs on Gymnasium envs; default: start one)")
	var server serverFlags
	server.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dir == "" {
		return usageError{fmt.Errorf("--run is required")}
	}
	if *n < 1 {
		return usageError{fmt.Errorf("--episodes = %d, want >= 1", *n)}
	}
	given := givenFlags(fs)
	fam, _, err := train.RunFamily(*dir)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, provenance.Line(*dir))
	if given["per-length"] {
		if err := fam.Supports(train.ToolPerLength, *dir); err != nil {
			return usageError{err}
		}
	}
	if *record != "" {
		if err := fam.Supports(train.ToolRecord, *dir); err != nil {
			return usageError{err}
		}
	}
	if *returns != "" {
		if err := fam.Supports(train.ToolReturns, *dir); err != nil {
			return usageError{err}
		}
	}
	reg := registry.Default()
	creds, err := server.credentials(servers)
	if err != nil {
		return err
	}
	maker := &envmaker.Maker{Registry: reg, Servers: servers, Credentials: creds, Server: server.options()}
	render := func(ctx context.Context, id string, seed int64, actions []any, out string) (int, float64, error) {
		res, err := maker.Render(ctx, id, seed, actions, out)
		return res.Frames, res.Return, err
	}
	return fam.Evaluate(ctx, *dir, train.EvalOptions{Registry: reg, Envs: train.FactoryEnvs{Factory: maker}, Episodes: *n, Seed: *seed,
		PerLength: *perLength, Record: *record, Render: render, Returns: *returns}, stdout)
}
