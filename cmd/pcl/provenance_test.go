package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/analysis"
	"github.com/sparsepcl/sparsepcl/internal/provenance"
)

// pcl eval and pcl report print the provenance a run recorded in run.json, and say so when a run
// has none.
func TestEvalAndReportPrintProvenance(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	var o, e bytes.Buffer
	if code := runMain(context.Background(), trainArgs(run, "--iters", "1"), &o, &e); code != 0 {
		t.Fatalf("train: exit %d: %s", code, e.String())
	}
	line := regexp.MustCompile(`(?m)^provenance: commit (unknown|[0-9a-f]{12} \((dirty|clean)\)), go\S+ \S+/\S+, BLAS .+, host .+ \(\d+ cores\)$`)
	o.Reset()
	if code := runMain(context.Background(), []string{"eval", "--run", run, "--episodes", "2", "--per-length=false"}, &o, &e); code != 0 {
		t.Fatalf("eval: exit %d: %s", code, e.String())
	}
	if !line.MatchString(o.String()) {
		t.Errorf("eval output lacks the provenance line:\n%s", o.String())
	}
	// The report lists the command that made the run (os.Args: here the test binary's), with the
	// program named pcl.
	if got := analysis.ProvenanceSection([]string{run}); !strings.Contains(got, "  - command: `pcl ") {
		t.Errorf("report section lacks the run's command:\n%s", got)
	}
	if err := os.Remove(filepath.Join(run, "run.json")); err != nil {
		t.Fatal(err)
	}
	if got := provenance.Line(run); !strings.Contains(got, "none recorded") {
		t.Errorf("run without run.json: %q", got)
	}
	if got := analysis.ProvenanceSection([]string{run}); !strings.Contains(got, "## Provenance") || !strings.Contains(got, "`"+run+"`: none recorded") {
		t.Errorf("report section %q", got)
	}
}
