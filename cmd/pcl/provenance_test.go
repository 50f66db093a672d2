package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/provenance"
	"github.com/sparsepcl/sparsepcl/internal/lab/analysis"
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
	line := regexp.MustCompile(`(?m)^provenance: (commit unknown|binary (unstamped( \(sha256 [0-9a-f]{12}\))?, work tree )?[0-9a-f]{12} \((dirty|clean)\)), go\S+ \S+/\S+, BLAS .+, host .+ \(\d+ cores\)$`)
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

// A binary built from a clean tree and run outside any checkout names, in run.json, the commit it
// was built from (its VCS stamp), clean, and no work tree: the commit of the checkout a binary
// happens to run in says nothing of what it is. The tree is this one's build inputs (uncommitted
// changes included) committed into a new repository, so that the code under test is built.
func TestRunJSONNamesTheBinary(t *testing.T) {
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("-short: builds pcl from a copy of the sources")
	}
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is needed to build a stamped binary:", err)
		}
		t.Skip("no git")
	}
	ctx, cancel := context.WithTimeout(context.Background(), testBudget(t, 5*time.Minute))
	defer cancel()
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src")
	head := commitBuildInputs(ctx, t, src)
	pcl := filepath.Join(tmp, "bin", "pcl")
	if out, err := runCmd(ctx, src, os.Environ(), "go", "build", "-buildvcs=true", "-o", pcl, "./cmd/pcl"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	work := filepath.Join(tmp, "elsewhere")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := runCmd(ctx, work, os.Environ(), pcl, "train", "--env", "Copy-v0", "--iters", "1", "--out", "run"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	f, err := provenance.Read(filepath.Join(work, "run"))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Sessions[0]
	if s.BinaryCommit != head || s.BinaryDirty == nil || *s.BinaryDirty || s.Commit != "" {
		t.Errorf("binary %q dirty %v, work tree %q; want binary %s clean and no work tree", s.BinaryCommit, s.BinaryDirty, s.Commit, head)
	}
	if want := "binary " + head[:12] + " (clean)"; !strings.HasPrefix(s.Summary(), want) {
		t.Errorf("summary %q, want it to start %q", s.Summary(), want)
	}
}

// commitBuildInputs copies the module's build inputs (go.mod, go.sum, and every non-test Go, C and
// assembly file git knows or would add) from the checkout holding the working directory into a
// new repository at dst, commits them, and returns the commit.
func commitBuildInputs(ctx context.Context, t *testing.T, dst string) string {
	t.Helper()
	top, err := runCmd(ctx, "", nil, "git", "rev-parse", "--show-toplevel")
	if err != nil {
		t.Fatalf("the tests run in a git checkout: %v", err)
	}
	top = strings.TrimSpace(top)
	list, err := runCmd(ctx, top, nil, "git", "ls-files", "-co", "--exclude-standard", "--", "go.mod", "go.sum", "*.go", "*.c", "*.h", "*.s")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(list) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(top, f))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := []string{"-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, append(git, "commit", "-q", "-m", "build inputs")} {
		if out, err := runCmd(ctx, dst, nil, "git", args...); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	head, err := runCmd(ctx, dst, nil, "git", "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(head)
}
