package rebuild

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A small repository with two commits of a module holding cmd/pcl: the second commit builds
// from the cache's clone, stamped with its commit and clean even with GOFLAGS=-buildvcs=false
// and from a git worktree of the repository (where Go itself would not stamp); the second call
// finds it cached; a commit the repository lacks names the fetch that brings it, and in a
// shallow clone the --unshallow fetch.
func TestGet(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t.Setenv("GOFLAGS", "-buildvcs=false")
	repo := t.TempDir()
	run := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name, text string) {
		t.Helper()
		path := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(repo, "init", "-q", ".")
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	write("cmd/pcl/main.go", "package main\n\nfunc main() { println(1) }\n")
	write("docs/results/big.txt", "left out of the build's tree\n")
	run(repo, "add", ".")
	run(repo, "commit", "-q", "-m", "one")
	first := run(repo, "rev-parse", "HEAD")
	write("cmd/pcl/main.go", "package main\n\nfunc main() { println(2) }\n")
	run(repo, "commit", "-q", "-am", "two")
	second := run(repo, "rev-parse", "HEAD")
	wt := filepath.Join(t.TempDir(), "wt")
	run(repo, "worktree", "add", "-q", "--detach", wt, first)

	cache := Cache{Dir: filepath.Join(t.TempDir(), "builds")}
	b, err := cache.Get(ctx, wt, second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if b.Cached || b.Commit != second || b.Path != filepath.Join(cache.Dir, second, Binary) {
		t.Fatalf("first Get: %+v", b)
	}
	if err := checkStamp(b.Path, second); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(b.Tree, "docs", "results", "big.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("docs/results is in the build's tree: %v", err)
	}
	if out, err := exec.CommandContext(ctx, b.Path).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "2" {
		t.Errorf("the binary of the second commit prints %q (%v), want 2", out, err)
	}
	if b, err := cache.Get(ctx, repo, second, io.Discard); err != nil || !b.Cached {
		t.Fatalf("second Get: %+v, %v; want it cached", b, err)
	}

	for _, tc := range []struct {
		name, dir, commit, says string
	}{
		{"unknown", repo, strings.Repeat("a", 40), "git fetch origin " + strings.Repeat("a", 40)},
		{"shallow", "", first, "git fetch --unshallow"},
		{"abbreviated", repo, first[:12], "not a full commit name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir
			if dir == "" {
				dir = filepath.Join(t.TempDir(), "shallow")
				run(repo, "clone", "-q", "--depth", "1", "file://"+repo, dir)
			}
			_, err := cache.Get(ctx, dir, tc.commit, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("Get: %v; want an error saying %q", err, tc.says)
			}
		})
	}
}
