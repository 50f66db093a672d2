// Command cem is a second agent on sparsepcl's bridge, sharing nothing with its learner: the
// cross-entropy method over linear policies with continuous actions (no action grid), on a
// Gymnasium env hosted by the Python server (Pendulum-v1 by default).
//
//	go run ./cem -env Pendulum-v1 -iters 20 -pop 32
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/sparsepcl/sparsepcl/bridge"
	"github.com/sparsepcl/sparsepcl/envs"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fs := flag.NewFlagSet("cem", flag.ExitOnError)
	env := fs.String("env", "Pendulum-v1", "a Gymnasium id with a Box action space")
	iters := fs.Int("iters", 20, "CEM iterations")
	pop := fs.Int("pop", 32, "population: one env copy per member")
	elite := fs.Int("elite", 6, "members the Gaussian is refitted to")
	seed := fs.Int64("seed", 1, "seed of the search and the resets")
	_ = fs.Parse(os.Args[1:])
	if _, err := run(ctx, os.Stdout, *env, *iters, *pop, *elite, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "cem:", err)
		os.Exit(1)
	}
}

// run searches iters iterations on env through a local server and returns what each saw.
func run(ctx context.Context, w io.Writer, env string, iters, pop, elite int, seed int64) ([]Iteration, error) {
	venv, err := bridge.Start(ctx, bridge.Config{EnvID: env, NumEnvs: pop, Autoreset: envs.AutoresetDisabled}, 1, bridge.ServerOptions{})
	if err != nil {
		return nil, err
	}
	defer venv.Close()
	obs, ok := venv.ObservationSpace().(envs.Box)
	if !ok {
		return nil, fmt.Errorf("%s: observation space %v is not a Box", env, venv.ObservationSpace())
	}
	cem := NewCEM(obs.FlatSize(), venv.ActionSpace().FlatSize(), elite, uint64(seed))
	var out []Iteration
	for it := range iters {
		r, err := cem.Step(ctx, venv, seed+int64(1000*it))
		if err != nil {
			return out, err
		}
		out = append(out, r)
		fmt.Fprintf(w, "iteration %d: mean return %.1f, best %.1f\n", it, r.Mean, r.Best)
	}
	return out, nil
}
