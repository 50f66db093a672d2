package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/sparsepcl/sparsepcl/agent/provenance"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// runVersion prints what this binary is, as a run's run.json records it: the commit it was built
// from (its VCS stamp) and the SHA-256 of the executable, the Go toolchain, the BLAS backend and
// the host.
func runVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", stderr)
	asJSON := fs.Bool("json", false, "print the provenance session as JSON (the fields of a run.json session)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	eng, err := tensor.NewEngine()
	if err != nil {
		return usageError{err}
	}
	s := provenance.Collect(ctx, eng.Backend(), 0)
	s.Command = nil
	if *asJSON {
		b, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return fmt.Errorf("version: %w", err)
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	_, err = fmt.Fprintf(stdout, "pcl: %s\nsha256 %s\n", s.Summary(), s.BinarySHA256)
	return err
}
