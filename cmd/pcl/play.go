package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sparsepcl/sparsepcl/envs/registry"
	"github.com/sparsepcl/sparsepcl/internal/play"
)

// runPlay plays an environment from the terminal, reading moves from os.Stdin.
func runPlay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return playCmd(ctx, args, os.Stdin, stdout, stderr)
}

// playCmd is runPlay with the input stream given, so tests can drive it.
func playCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("play", stderr)
	id := fs.String("env", "Copy-v0", "environment id (see pcl list)")
	base := fs.Int("base", 0, "vocabulary size (0: the task's default)")
	seed := fs.Int64("seed", 0, "random seed of the first episode (0: random)")
	input := fs.String("input", "", `explicit input: symbols "1,2,3" on the tape, columns "2,1;1,0" on the grid`)
	actions := fs.String("actions", "", "replay these combined action indices (comma-separated) instead of reading moves")
	run := fs.String("run", "", "watch the greedy policy of the training run in this `directory` instead of playing yourself")
	level := fs.Int("level", 0, "with --run: curriculum level (min_length) of the episodes (0: the level the run was trained to)")
	delay := fs.Duration("delay", 0, "with --run: pause between steps, e.g. 300ms (0: press Enter for each step)")
	episodes := fs.Int("episodes", 1, "with --run: episodes to play")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: pcl play [flags]\n       pcl play --run DIR [--delay 300ms] [--input ...]\n\n%s\n\nflags:\n", play.Help)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	given := givenFlags(fs)
	if *run != "" {
		for _, name := range []string{"env", "base", "actions"} {
			if given[name] {
				return usageError{fmt.Errorf("--%s does not go with --run: the run's config.json gives the env, and its policy the actions", name)}
			}
		}
		if *episodes < 1 || *level < 0 || *delay < 0 {
			return usageError{fmt.Errorf("--episodes %d, --level %d, --delay %v: want episodes >= 1, level >= 0, delay >= 0", *episodes, *level, *delay)}
		}
		return watchRun(ctx, watchOptions{dir: *run, level: *level, seed: *seed, input: *input, delay: *delay, episodes: *episodes}, stdin, stdout)
	}
	for _, name := range []string{"level", "delay", "episodes"} {
		if given[name] {
			return usageError{fmt.Errorf("--%s works with --run only", name)}
		}
	}
	opts := map[string]any{}
	if *base != 0 {
		opts["base"] = *base
	}
	env, err := registry.Default().Make(*id, opts)
	if err != nil {
		return usageError{err}
	}
	defer env.Close()
	sess, err := play.NewSession(env, *seed, *input, stdout)
	if err != nil {
		return usageError{fmt.Errorf("%s: %w", *id, err)}
	}
	if err := sess.Reset(); err != nil {
		return usageError{err}
	}
	if *actions != "" {
		return replayActions(ctx, sess, *actions)
	}
	return playInteractively(ctx, sess, stdin, stdout)
}

// replayActions steps sess through the comma-separated combined action indices of list.
func replayActions(ctx context.Context, sess *play.Session, list string) error {
	acts, err := play.ParseActions(list)
	if err != nil {
		return usageError{fmt.Errorf("--actions: %w", err)}
	}
	for i, a := range acts {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := sess.Step(a); err != nil {
			return fmt.Errorf("action %d: %w", i+1, err)
		}
	}
	return nil
}

// playInteractively reads moves from stdin until it ends or the player quits.
func playInteractively(ctx context.Context, sess *play.Session, stdin io.Reader, stdout io.Writer) error {
	fmt.Fprintln(stdout, play.Help)
	lines := play.Lines(ctx, stdin)
	for {
		fmt.Fprint(stdout, "> ")
		var line string
		select {
		case <-ctx.Done():
			return ctx.Err()
		case l, ok := <-lines:
			if !ok {
				fmt.Fprintln(stdout)
				return nil
			}
			line = strings.TrimSpace(l)
		}
		switch line {
		case "":
		case "q", "quit", "exit":
			return nil
		case "n", "new", "reset":
			if err := sess.Reset(); err != nil {
				return err
			}
		default:
			if err := sess.Move(line); err != nil {
				fmt.Fprintf(stdout, "%v\n", err)
			}
		}
	}
}
