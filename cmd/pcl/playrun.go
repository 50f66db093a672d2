package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/sparsepcl/sparsepcl/envs/registry"
	"github.com/sparsepcl/sparsepcl/internal/lab/watch"
	"github.com/sparsepcl/sparsepcl/internal/play"
)

// watchOptions are pcl play's flags for replaying a trained run.
type watchOptions struct {
	dir      string
	level    int           // curriculum level; 0: the trained one
	seed     int64         // seed of the first episode (0: random)
	input    string        // explicit input, as play's --input
	delay    time.Duration // pause between steps; 0: wait for Enter
	episodes int
}

// watchRun plays a trained run's greedy policy on the terminal: one step per Enter, or one every
// delay. When stdin ends, the remaining steps play without pausing, so a piped run prints whole
// episodes.
func watchRun(ctx context.Context, o watchOptions, stdin io.Reader, stdout io.Writer) error {
	pl, err := watch.Open(o.dir, registry.Default(), nil)
	if err != nil {
		return err
	}
	defer pl.Close()
	var input any
	if o.input != "" {
		if input, err = play.ParseInput(o.input, pl.Grid()); err != nil {
			return usageError{fmt.Errorf("--input: %w", err)}
		}
	}
	level := pl.TrainedLevel()
	if o.level > 0 {
		level = o.level
	}
	c := pl.Config
	fmt.Fprintf(stdout, "run %s: %s base %d, %s α = %g, after %d iterations; greedy policy at min_length %d (trained to %d)\n",
		o.dir, c.Env, c.Base, c.Algo, c.Alpha, pl.Meta.Iteration, level, pl.TrainedLevel())
	if o.delay > 0 {
		fmt.Fprintf(stdout, "one step every %v; Ctrl-C stops\n\n", o.delay)
	} else {
		fmt.Fprint(stdout, "Enter: next step, q: quit\n\n")
	}
	pace := play.NewPacer(ctx, stdin, o.delay)
	for ep := range o.episodes {
		var seed *int64
		if o.seed != 0 {
			s := o.seed + int64(ep)
			seed = &s
		}
		if err := pl.Reset(level, seed, input); err != nil {
			return usageError{err}
		}
		fmt.Fprint(stdout, pl.Render())
		for done := false; !done; {
			more, err := pace.Wait(ctx)
			if err != nil {
				return fmt.Errorf("%w: %v", errInterrupted, err)
			}
			if !more {
				return nil
			}
			st, err := pl.Step()
			if err != nil {
				return err
			}
			fmt.Fprint(stdout, pl.Render())
			fmt.Fprintf(stdout, "Policy  : p = %.2f for this action, %d of %d actions in the support\n", st.Prob, st.Support, pl.NumActions())
			done = st.Done
		}
		fmt.Fprintf(stdout, "episode over: return %+.1f\n\n", pl.Return())
	}
	return nil
}
