package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sparsepcl/sparsepcl/agent/atomicfile"
	"github.com/sparsepcl/sparsepcl/internal/lab/analysis"
	"github.com/sparsepcl/sparsepcl/internal/lab/evaluation"
	"github.com/sparsepcl/sparsepcl/internal/lab/goldens"
)

// runTables regenerates the result tables of a spec from the committed runs into the markdown
// files that hold them (and the PNGs of its figures), and the provenance table of every results
// folder (docs/results/REPRODUCE.md), or with --check says which differ from what is committed.
func runTables(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("tables", stderr)
	spec := fs.String("spec", filepath.Join("docs", "results", "tables.json"), "`file` listing the tables: name, markdown file, kind, arms (run globs relative to --root)")
	root := fs.String("root", ".", "`directory` the spec's files and run globs are relative to")
	check := fs.Bool("check", false, "write nothing: exit 1 naming each table that differs from its file")
	goldenPath := fs.String("goldens", goldens.DefaultPath, "the golden runs' manifest `file` (what each covers and whether today's code reproduces it), relative to --root")
	provenancePath := fs.String("provenance", filepath.Join(goldens.ResultsDir, "REPRODUCE.md"), "markdown `file` for the provenance table of every results folder (\"\": none), relative to --root")
	if err := parseFlagsAndArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments %q (run 'pcl tables -h' for the flags)", fs.Args())}
	}
	specs, err := analysis.ReadTableSpecs(filepath.Join(*root, *spec), evaluation.TableKinds())
	if err != nil {
		return err
	}
	type table struct{ name, file, text string }
	type figure struct {
		name, path string
		png        []byte
	}
	var tables []table
	var figures []figure
	for _, s := range specs {
		if s.Kind == analysis.KindPanels {
			f, err := analysis.RenderFigure(*root, s)
			if err != nil {
				return err
			}
			tables = append(tables, table{s.Name, s.File, f.Text})
			figures = append(figures, figure{s.Name, s.Figure.Path, f.PNG})
			continue
		}
		text, err := evaluation.RenderTable(*root, s)
		if err != nil {
			return err
		}
		tables = append(tables, table{s.Name, s.File, text})
	}
	if *provenancePath != "" {
		gs, err := goldens.Read(filepath.Join(*root, *goldenPath))
		if err != nil {
			return err
		}
		text, err := goldens.Table(*root, gs)
		if err != nil {
			return err
		}
		tables = append(tables, table{"provenance", *provenancePath, text})
	}
	var stale []string
	for _, s := range tables {
		path := filepath.Join(*root, s.file)
		doc, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("tables: %w", err)
		}
		updated, err := analysis.ReplaceTable(string(doc), s.name, s.text)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if updated == string(doc) {
			continue
		}
		if *check {
			stale = append(stale, fmt.Sprintf("%s in %s", s.name, s.file))
			continue
		}
		if err := atomicfile.WriteFile(path, []byte(updated), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "table %s: written into %s\n", s.name, s.file)
	}
	for _, f := range figures {
		path := filepath.Join(*root, f.path)
		committed, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("tables: %w", err)
		}
		if bytes.Equal(committed, f.png) {
			continue
		}
		if *check {
			stale = append(stale, fmt.Sprintf("the figure of %s, %s", f.name, f.path))
			continue
		}
		if err := atomicfile.WriteFile(path, f.png, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "figure %s: written to %s\n", f.name, f.path)
	}
	if len(stale) > 0 {
		return fmt.Errorf("tables differ from the runs (regenerate them with pcl tables): %v", stale)
	}
	if *check {
		fmt.Fprintf(stdout, "every table (%d) and figure (%d) matches its runs\n", len(tables), len(figures))
	}
	return nil
}
