// Command pcl trains, evaluates and benchmarks sparse and soft PCL agents, and lists and plays the
// environments they train on. Run `pcl help` for the subcommands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/memory"
)

// command is one subcommand: run gets the arguments after the subcommand's name.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	os.Exit(runMain(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// Exit codes of pcl, as `pcl help` documents them.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitInterrupted = 130 // 128 + SIGINT, what a shell reports for a process stopped by Ctrl-C
)

// runMain dispatches to a subcommand and turns its error into an exit code (see usage).
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 0 {
		// A bare `pcl` is a command line missing its command: the usage goes where errors go.
		usage(stderr, cmds)
		return exitUsage
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout, cmds)
		return exitOK
	}
	for _, c := range cmds {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, args[1:], stdout, stderr)
		switch {
		case err == nil, errors.Is(err, flag.ErrHelp):
			return exitOK
		case errors.Is(err, errInterrupted):
			fmt.Fprintf(stderr, "pcl %s: %v\n", c.name, err)
			return exitInterrupted
		case ctx.Err() != nil && errors.Is(err, context.Canceled):
			// A command without its own interruption message was stopped by the signal itself.
			fmt.Fprintf(stderr, "pcl %s: interrupted: %v\n", c.name, err)
			return exitInterrupted
		case errors.As(err, new(usageError)):
			report(stderr, c.name, err)
			return exitUsage
		default:
			report(stderr, c.name, err)
			return exitFailure
		}
	}
	names := make([]string, len(cmds))
	for i, c := range cmds {
		names[i] = c.name
	}
	fmt.Fprintf(stderr, "pcl: unknown command %q (commands: %s; run 'pcl help' for what they do)\n", args[0], strings.Join(names, ", "))
	return exitUsage
}

// report writes a failed command's error to stderr, and on a line of its own what to do about it
// when there is advice (hint).
func report(stderr io.Writer, name string, err error) {
	fmt.Fprintf(stderr, "pcl %s: %v\n", name, err)
	if h := hint(err); h != "" {
		fmt.Fprintf(stderr, "pcl %s: %s\n", name, h)
	}
}

func usage(w io.Writer, cmds []command) {
	fmt.Fprintln(w, "usage: pcl <command> [flags]\n\ncommands:")
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'pcl <command> -h' for a command's flags.")
	fmt.Fprintf(w, "\nexit codes:\n"+
		"  %-3d  finished\n"+
		"  %-3d  failed (the message says why)\n"+
		"  %-3d  bad command line: no or unknown command, unknown flag, bad flag value\n"+
		"  %-3d  interrupted by Ctrl-C or SIGTERM, after saving what it had: pcl train --resume,\n"+
		"       or the same pcl compare or pcl sweep run again, goes on from there\n",
		exitOK, exitFailure, exitUsage, exitInterrupted)
}

// errInterrupted marks a command that stopped on a signal after saving its state; runMain turns
// it into exit code 130.
var errInterrupted = errors.New("interrupted")

// interrupted turns err, the failure of a command whose context was cancelled (Ctrl-C or
// SIGTERM), into an error wrapping errInterrupted whose message says what was kept; any other
// error, and nil, pass through.
func interrupted(ctx context.Context, err error, kept string) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	return fmt.Errorf("%w: %s", errInterrupted, kept)
}

// usageError marks errors in the command line, as opposed to failures while running. Its
// message names the flags of the config fields it is about (flagText).
type usageError struct{ err error }

func (e usageError) Error() string { return flagText(e.err) }
func (e usageError) Unwrap() error { return e.err }

// flagText is err's message with the config fields it names (config.FieldNamer errors) named by
// their flags, for errors in a config the command line built: "--tsallis-q = 1: ... use --algo
// soft" for the library's "config: tsallis_q = 1: ... use algo soft". A field without a flag keeps
// its JSON name; memory.LimitError's limit is --max-memory.
func flagText(err error) string { return config.Renamed(err, flagName) }

// flagName is the flag of a config field (by its JSON name), or the name itself when it has none.
func flagName(field string) string {
	if f, ok := config.FieldFlags()[field]; ok {
		return "--" + f
	}
	if field == memory.MaxField {
		return "--max-memory"
	}
	return field
}

// flagError is an error of a config the command line built, its message naming flags (flagText).
type flagError struct{ err error }

func (e flagError) Error() string { return flagText(e.err) }
func (e flagError) Unwrap() error { return e.err }

// newFlagSet returns a flag set that reports errors instead of exiting; -h writes the usage
// line and the flags to stderr.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("pcl "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s [flags]\n\nflags:\n", fs.Name())
		printFlags(fs, func(string) bool { return true })
	}
	return fs
}

// printFlags writes the flags of fs that shown accepts as flag.PrintDefaults does, leaving out
// the older spellings of config flags (config.IsFlagAlias), which still parse.
func printFlags(fs *flag.FlagSet, shown func(name string) bool) {
	listed := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	listed.SetOutput(fs.Output())
	fs.VisitAll(func(f *flag.Flag) {
		if shown(f.Name) && !config.IsFlagAlias(fs, f) {
			listed.Var(f.Value, f.Name, f.Usage)
			listed.Lookup(f.Name).DefValue = f.DefValue // not a value already parsed
		}
	})
	listed.PrintDefaults()
}

// givenFlags names the flags the command line set (after parsing), a config flag given by its
// older spelling (--lr) by its name (--learning-rate).
func givenFlags(fs *flag.FlagSet) map[string]bool {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) {
		if config.IsFlagAlias(fs, f) {
			given[config.CanonicalFlag(f.Name)] = true
			return
		}
		given[f.Name] = true
	})
	return given
}

// parseFlags parses args into fs and wraps a bad command line as a usageError.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := parseFlagsAndArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments %q (run '%s -h' for the flags)", fs.Args(), fs.Name())}
	}
	return nil
}

// parseFlagsAndArgs is parseFlags for commands that take arguments after the flags. Only -h
// prints the usage: a bad flag is one line (runMain prints the error), not the whole flag list
// that package flag would print before it.
func parseFlagsAndArgs(fs *flag.FlagSet, args []string) error {
	out, help := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = help
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		if help != nil {
			help()
		} else {
			fs.PrintDefaults()
		}
		return err
	}
	return usageError{fmt.Errorf("%w (run '%s -h' for the flags)", err, fs.Name())}
}

// hideFlags is for commands that share a registration such as config.RegisterFlags but do not
// honour all of its flags: ignored(name) says why a flag does not apply ("" when it does). The
// help lists only the flags that apply, and the returned check, run after parsing, refuses an
// ignored flag given on the command line rather than silently dropping it.
func hideFlags(fs *flag.FlagSet, ignored func(name string) string) (check func() error) {
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s [flags]\n\nflags:\n", fs.Name())
		printFlags(fs, func(name string) bool { return ignored(name) == "" })
	}
	return func() error {
		var err error
		fs.Visit(func(f *flag.Flag) {
			if why := ignored(f.Name); why != "" && err == nil {
				err = usageError{fmt.Errorf("--%s does not apply: %s", f.Name, why)}
			}
		})
		return err
	}
}
