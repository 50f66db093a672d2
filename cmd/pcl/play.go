package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

const playHelp = `Moves: l, r (grid also u, d) move the read head; add "w C" to write symbol C first
(a number, or a letter A.. when base <= 26): e.g. "r w 3", "l w B". A bare number is a combined
action index. "n" starts a new episode, "q" quits.`

// runPlay plays an environment from the terminal, reading moves from os.Stdin.
func runPlay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return play(ctx, args, os.Stdin, stdout, stderr)
}

// play is runPlay with the input stream given, so tests can drive it.
func play(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
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
		fmt.Fprintf(stderr, "usage: pcl play [flags]\n       pcl play --run DIR [--delay 300ms] [--input ...]\n\n%s\n\nflags:\n", playHelp)
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
	factors, ok := env.(envs.ActionFactors)
	renderer, ok2 := env.(interface{ Render() string })
	if !ok || !ok2 {
		return usageError{fmt.Errorf("%s cannot be played from the terminal", *id)}
	}
	comps := factors.ActionComponents() // (moves, 2, base)
	radix, err := envs.NewMixedRadix(comps...)
	if err != nil {
		return err
	}
	resetOpts := map[string]any{}
	if *input != "" {
		in, err := parseInput(*input, comps[0] == 4)
		if err != nil {
			return usageError{fmt.Errorf("--input: %w", err)}
		}
		resetOpts["input"] = in
	}
	var seedPtr *int64
	if *seed != 0 {
		seedPtr = seed
	}
	reset := func() error {
		if _, _, err := env.Reset(seedPtr, resetOpts); err != nil {
			return err
		}
		seedPtr = nil
		fmt.Fprint(stdout, renderer.Render())
		return nil
	}
	if err := reset(); err != nil {
		return usageError{err}
	}
	total := 0.0
	apply := func(a int64) error {
		_, r, term, trunc, _, err := env.Step(a)
		if err != nil {
			return err
		}
		total += r
		fmt.Fprint(stdout, renderer.Render())
		if term || trunc {
			fmt.Fprintf(stdout, "episode over: return %+.1f\n\n", total)
			total = 0
			return reset()
		}
		return nil
	}
	if *actions != "" {
		for i, f := range strings.Split(*actions, ",") {
			if err := ctx.Err(); err != nil {
				return err
			}
			a, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil {
				return usageError{fmt.Errorf("--actions item %d: %q is not an integer", i+1, f)}
			}
			if err := apply(a); err != nil {
				return fmt.Errorf("action %d: %w", i+1, err)
			}
		}
		return nil
	}
	fmt.Fprintln(stdout, playHelp)
	lines := readLines(ctx, stdin)
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
			continue
		case "q", "quit", "exit":
			return nil
		case "n", "new", "reset":
			total = 0
			if err := reset(); err != nil {
				return err
			}
			continue
		}
		a, err := parseMove(line, radix, comps)
		if err == nil {
			err = apply(a)
		}
		if err != nil {
			fmt.Fprintf(stdout, "%v\n", err)
		}
	}
}

// readLines delivers the lines of r until EOF or until ctx ends.
func readLines(ctx context.Context, r io.Reader) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			select {
			case ch <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

var moveLetters = map[string]int64{"l": 0, "left": 0, "r": 1, "right": 1, "u": 2, "up": 2, "d": 3, "down": 3}

// parseMove reads "r", "l w 3", "u w B" or a bare combined index.
func parseMove(line string, radix envs.MixedRadix, comps []int64) (int64, error) {
	if n, err := strconv.ParseInt(line, 10, 64); err == nil {
		if n < 0 || n >= radix.Size() {
			return 0, fmt.Errorf("action %d out of range [0, %d)", n, radix.Size())
		}
		return n, nil
	}
	f := strings.Fields(strings.ToLower(line))
	move, ok := moveLetters[f[0]]
	if !ok || move >= comps[0] {
		return 0, fmt.Errorf("unknown move %q (%s)", f[0], strings.Join([]string{"l", "r", "u", "d"}[:comps[0]], ", "))
	}
	write, char := int64(0), int64(0)
	switch {
	case len(f) == 1:
	case len(f) == 3 && (f[1] == "w" || f[1] == "write"):
		write = 1
		var err error
		char, err = parseSymbol(f[2], comps[2])
		if err != nil {
			return 0, err
		}
	default:
		return 0, errors.New(`want "<move>" or "<move> w <symbol>", e.g. "r w 3"`)
	}
	return radix.Combine([]int64{move, write, char})
}

func parseSymbol(s string, base int64) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 || n >= base {
			return 0, fmt.Errorf("symbol %d out of range [0, %d)", n, base)
		}
		return n, nil
	}
	if len(s) == 1 && base <= 26 {
		if c := int64(strings.ToUpper(s)[0]) - 'A'; c >= 0 && c < base {
			return c, nil
		}
	}
	return 0, fmt.Errorf("%q is not a symbol of base %d", s, base)
}

// parseInput reads "1,2,3" (tape) or "2,1;1,0" (grid columns).
func parseInput(s string, grid bool) (any, error) {
	ints := func(part string) ([]int64, error) {
		var out []int64
		for f := range strings.SplitSeq(part, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%q is not an integer", f)
			}
			out = append(out, n)
		}
		return out, nil
	}
	if !grid {
		return ints(s)
	}
	var cols [][]int64
	for c := range strings.SplitSeq(s, ";") {
		col, err := ints(c)
		if err != nil {
			return nil, err
		}
		cols = append(cols, col)
	}
	return cols, nil
}
