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
	"syscall"
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

// runMain dispatches to a subcommand and turns its error into an exit code: 2 for usage errors.
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout, cmds)
		return 0
	}
	for _, c := range cmds {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, args[1:], stdout, stderr)
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errInterrupted):
			fmt.Fprintf(stderr, "pcl %s: %v\n", c.name, err)
			return exitInterrupted
		case errors.As(err, new(usageError)):
			fmt.Fprintf(stderr, "pcl %s: %v\n", c.name, err)
			return 2
		default:
			fmt.Fprintf(stderr, "pcl %s: %v\n", c.name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "pcl: unknown command %q\n\n", args[0])
	usage(stderr, cmds)
	return 2
}

func usage(w io.Writer, cmds []command) {
	fmt.Fprintln(w, "usage: pcl <command> [flags]\n\ncommands:")
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun `pcl <command> -h` for a command's flags.")
}

// exitInterrupted is the exit code of a command stopped by Ctrl-C or SIGTERM (128 + SIGINT), after
// it has saved what it had.
const exitInterrupted = 130

// errInterrupted marks a command that stopped on a signal after saving its state; runMain turns
// it into exit code 130.
var errInterrupted = errors.New("interrupted")

// usageError marks errors in the command line, as opposed to failures while running.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// newFlagSet returns a flag set that reports errors instead of exiting, writing help to stderr.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("pcl "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args into fs and wraps a bad command line as a usageError.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments: %v", fs.Args())}
	}
	return nil
}
