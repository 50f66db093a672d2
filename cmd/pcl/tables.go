package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sparsepcl/sparsepcl/agent/analysis"
	"github.com/sparsepcl/sparsepcl/agent/experiment"
	"github.com/sparsepcl/sparsepcl/internal/atomicfile"
)

// runTables regenerates the result tables of a spec from the committed runs into the markdown
// files that hold them, or with --check says which differ from what is committed.
func runTables(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("tables", stderr)
	spec := fs.String("spec", filepath.Join("docs", "results", "tables.json"), "`file` listing the tables: name, markdown file, kind, arms (run globs relative to --root)")
	root := fs.String("root", ".", "`directory` the spec's files and run globs are relative to")
	check := fs.Bool("check", false, "write nothing: exit 1 naming each table that differs from its file")
	if err := parseFlagsAndArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments %q (run 'pcl tables -h' for the flags)", fs.Args())}
	}
	specs, err := analysis.ReadTableSpecs(filepath.Join(*root, *spec), experiment.TableKinds())
	if err != nil {
		return err
	}
	var stale []string
	for _, s := range specs {
		table, err := experiment.RenderTable(*root, s)
		if err != nil {
			return err
		}
		path := filepath.Join(*root, s.File)
		doc, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("tables: %w", err)
		}
		updated, err := analysis.ReplaceTable(string(doc), s.Name, table)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if updated == string(doc) {
			continue
		}
		if *check {
			stale = append(stale, fmt.Sprintf("%s in %s", s.Name, s.File))
			continue
		}
		if err := atomicfile.WriteFile(path, []byte(updated), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "table %s: written into %s\n", s.Name, s.File)
	}
	if len(stale) > 0 {
		return fmt.Errorf("tables differ from the runs (regenerate them with pcl tables): %v", stale)
	}
	if *check {
		fmt.Fprintf(stdout, "%d tables match their runs\n", len(specs))
	}
	return nil
}
