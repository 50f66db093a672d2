package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// runList prints every Go-native environment id with its spaces.
func runList(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("list", stderr)
	base := fs.Int("base", 0, "vocabulary size of the algorithmic tasks (0: each task's default)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *base != 0 && *base < 2 {
		return usageError{fmt.Errorf("--base %d: want >= 2 (or 0 for the defaults)", *base)}
	}
	reg := registry.Default()
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tOBSERVATION\tACTION\tDESCRIPTION")
	for _, id := range reg.IDs() {
		opts := map[string]any{}
		if _, err := algorithmic.TaskByID(id); err == nil && *base != 0 {
			opts["base"] = *base // the other ids take no base
		}
		env, err := reg.Make(id, opts)
		if err != nil {
			return err
		}
		f, _ := reg.Lookup(id)
		fmt.Fprintf(tw, "%s\t%v\t%v\t%s\n", id, env.ObservationSpace(), env.ActionSpace(), f.Summary)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("list: %w", err)
	}
	fmt.Fprintln(stdout, "\nRemote (Gymnasium) ids such as HalfCheetah-v5 are served through the bridge.")
	return nil
}
