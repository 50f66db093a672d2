package main

import (
	"context"
	"io"

	"github.com/sparsepcl/sparsepcl/bridge"
	"github.com/sparsepcl/sparsepcl/internal/lab/envbench"
)

// runEnvBench measures env stepping side by side (internal/lab/envbench): in-process Gymnasium
// against the bridge, the bridge's transport cost, Go-native against Python.
func runEnvBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("envbench", stderr)
	var o envbench.Options
	fs.StringVar(&o.Env, "env", "HalfCheetah-v5", "Gymnasium env for the in-process vs bridge comparison")
	fs.IntVar(&o.N, "n", 64, "copies per batch for the in-process vs bridge comparison")
	fs.IntVar(&o.Steps, "steps", 50, "batched steps per measurement")
	fs.IntVar(&o.Rounds, "rounds", 25, "measurement rounds (medians are reported)")
	fs.StringVar(&o.Python, "python", "", "Python interpreter (default: $SPARSEPCL_PYTHON, .venv/bin/python, python3)")
	authCost := fs.Bool("auth", false, "measure only what ZeroMQ PLAIN authentication costs: the env over tcp loopback with credentials against without, alternately")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := o.Check(); err != nil {
		return usageError{err}
	}
	root, err := bridge.FindRoot()
	if err != nil {
		return err
	}
	o.Root = root
	if o.Python == "" {
		o.Python = bridge.FindPython(root)
	}
	run := envbench.Run
	if *authCost {
		run = envbench.RunAuth
	}
	// A signal fails whichever measurement is under way: report it as the interruption it is.
	return interrupted(ctx, run(ctx, o, stdout), "envbench stopped before its tables were complete (it saves nothing)")
}
