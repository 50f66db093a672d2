package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/sparsepcl/sparsepcl/internal/provenance"
)

// provenanceLine is the one-line provenance of the run in dir, from its run.json.
func provenanceLine(dir string) string {
	f, err := provenance.Read(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "provenance: none recorded (the run has no run.json: it predates provenance)"
	case err != nil:
		return fmt.Sprintf("provenance: unreadable: %v", err)
	}
	return f.Describe()
}

// provenanceSection is report.md's section listing each run's provenance.
func provenanceSection(dirs []string) string {
	var b strings.Builder
	b.WriteString("\n## Provenance\n\n")
	for _, d := range dirs {
		fmt.Fprintf(&b, "- `%s`: %s\n", d, strings.TrimPrefix(provenanceLine(d), "provenance: "))
	}
	return b.String()
}
