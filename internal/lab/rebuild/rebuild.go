// Package rebuild makes the pcl binary of a recorded commit, so that a run can be re-run by the
// code that made it: a clone of the checkout's repository at that commit (its objects shared
// with the repository, docs/results left out) in a cache keyed by commit, built with
// go build -buildvcs=true, whose VCS stamp is checked to name the commit, clean.
//
// The clone is a real repository (a .git directory), not a git worktree: Go stamps a binary
// only where .git is a directory, so a build in a worktree carries no commit even with
// -buildvcs=true. The flag on the command line overrides GOFLAGS=-buildvcs=false.
package rebuild

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// BuildTimeout bounds one build (clone, checkout and go build of a cold cache).
const BuildTimeout = 15 * time.Minute

// gitTimeout bounds each git command.
const gitTimeout = 2 * time.Minute

// Binary is the file name of a built binary inside its commit's cache directory.
const Binary = "pcl"

// recordFile describes a build beside its binary.
const recordFile = "build.json"

// fullCommit is a full SHA-1 commit name.
var fullCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

// Cache is a directory of builds, one sub-directory per commit: src (the clone), pcl (the
// binary) and build.json.
type Cache struct {
	Dir string
}

// DefaultCache is the cache under the user's cache directory: <UserCacheDir>/sparsepcl/builds.
func DefaultCache() (Cache, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return Cache{}, fmt.Errorf("rebuild: no user cache directory: %w", err)
	}
	return Cache{Dir: filepath.Join(d, "sparsepcl", "builds")}, nil
}

// Build is a built binary.
type Build struct {
	Commit    string        `json:"commit"`
	Path      string        `json:"-"` // the binary
	Tree      string        `json:"-"` // the commit's source tree (docs/results left out)
	GoVersion string        `json:"go_version"`
	SHA256    string        `json:"sha256"`
	Took      time.Duration `json:"took_ns"` // the clone and build, when this call built it
	Cached    bool          `json:"-"`       // found in the cache, not built by this call
	Built     time.Time     `json:"built"`
}

// MissingError is a commit the repository does not hold.
type MissingError struct {
	Commit, Repo string
	Shallow      bool
}

func (e *MissingError) Error() string {
	if e.Shallow {
		return fmt.Sprintf("commit %s is not in %s, a shallow clone: fetch the history with `git fetch --unshallow` "+
			"(or just that commit with `git fetch origin %s`) and try again", e.Commit, e.Repo, e.Commit)
	}
	return fmt.Sprintf("commit %s is not in %s: fetch it with `git fetch origin %s` (if it was never pushed, "+
		"only the repository it was made in has it)", e.Commit, e.Repo, e.Commit)
}

// Get returns the binary of commit, building it when the cache has none. repo is a directory
// inside a checkout of this project: its repository must hold the commit. Progress lines go to
// log.
func (c Cache) Get(ctx context.Context, repo, commit string, log io.Writer) (Build, error) {
	if !fullCommit.MatchString(commit) {
		return Build{}, fmt.Errorf("rebuild: %q is not a full commit name", commit)
	}
	dir := filepath.Join(c.Dir, commit)
	if b, err := c.cached(dir, commit); err == nil {
		return b, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return Build{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, BuildTimeout)
	defer cancel()
	common, err := repository(ctx, repo, commit)
	if err != nil {
		return Build{}, err
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return Build{}, fmt.Errorf("rebuild: %w", err)
	}
	tmp, err := os.MkdirTemp(c.Dir, ".build-"+commit[:12]+"-")
	if err != nil {
		return Build{}, fmt.Errorf("rebuild: %w", err)
	}
	defer os.RemoveAll(tmp) // after the rename, nothing is left there
	start := time.Now()
	fmt.Fprintf(log, "building %s into %s (a clone of %s; go build -buildvcs=true)\n", commit[:12], dir, common)
	src := filepath.Join(tmp, "src")
	if err := checkout(ctx, common, src, commit); err != nil {
		return Build{}, err
	}
	b, err := build(ctx, src, filepath.Join(tmp, Binary), commit)
	if err != nil {
		return Build{}, err
	}
	b.Took, b.Built = time.Since(start).Round(time.Millisecond), time.Now().UTC().Truncate(time.Second)
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return Build{}, fmt.Errorf("rebuild: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, recordFile), append(data, '\n'), 0o644); err != nil {
		return Build{}, fmt.Errorf("rebuild: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process built the same commit meanwhile: use its build.
		if cb, cerr := c.cached(dir, commit); cerr == nil {
			return cb, nil
		}
		return Build{}, fmt.Errorf("rebuild: %w", err)
	}
	b.Path, b.Tree = filepath.Join(dir, Binary), filepath.Join(dir, "src")
	fmt.Fprintf(log, "built %s in %s\n", commit[:12], b.Took.Round(100*time.Millisecond))
	return b, nil
}

// cached returns the build in dir when its record and binary are there and the binary's stamp
// names commit, clean (os.ErrNotExist when there is no build).
func (c Cache) cached(dir, commit string) (Build, error) {
	data, err := os.ReadFile(filepath.Join(dir, recordFile))
	if err != nil {
		return Build{}, err
	}
	var b Build
	if err := json.Unmarshal(data, &b); err != nil {
		return Build{}, fmt.Errorf("rebuild: %s: %w (remove the directory to rebuild)", filepath.Join(dir, recordFile), err)
	}
	b.Path, b.Tree, b.Cached, b.Took = filepath.Join(dir, Binary), filepath.Join(dir, "src"), true, 0
	if err := checkStamp(b.Path, commit); err != nil {
		return Build{}, fmt.Errorf("%w (remove %s to rebuild)", err, dir)
	}
	return b, nil
}

// repository returns the git directory shared by the checkout holding dir (a worktree's main
// repository), after checking that it holds commit.
func repository(ctx context.Context, dir, commit string) (string, error) {
	common, err := git(ctx, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", fmt.Errorf("rebuild: %s is not in a git checkout of this project (run from a clone with history): %w", dir, err)
	}
	if _, err := git(ctx, dir, "cat-file", "-e", commit+"^{commit}"); err != nil {
		shallow, serr := git(ctx, dir, "rev-parse", "--is-shallow-repository")
		if serr != nil {
			return "", fmt.Errorf("rebuild: %w", serr)
		}
		return "", &MissingError{Commit: commit, Repo: common, Shallow: shallow == "true"}
	}
	return common, nil
}

// checkout makes src a clone of the repository common (sharing its objects, so that any commit
// it holds is there, reachable from a branch or not) with commit checked out, docs/results (the
// committed runs, most of a checkout's size) left out by a sparse checkout.
func checkout(ctx context.Context, common, src, commit string) error {
	if _, err := git(ctx, "", "clone", "--quiet", "--shared", "--no-checkout", common, src); err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	if _, err := git(ctx, src, "config", "core.sparseCheckout", "true"); err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	if err := os.WriteFile(filepath.Join(src, ".git", "info", "sparse-checkout"), []byte("/*\n!/docs/results/\n"), 0o644); err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	if _, err := git(ctx, src, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", commit); err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	return nil
}

// build runs go build -buildvcs=true in src into bin and checks the binary's stamp.
func build(ctx context.Context, src, bin, commit string) (Build, error) {
	cmd := exec.CommandContext(ctx, "go", "build", "-buildvcs=true", "-o", bin, "./cmd/pcl")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return Build{}, fmt.Errorf("rebuild: go build -buildvcs=true ./cmd/pcl at %s: %w\n%s", commit[:12], err, out)
	}
	if err := checkStamp(bin, commit); err != nil {
		return Build{}, err
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return Build{}, fmt.Errorf("rebuild: %w", err)
	}
	sum, err := fileSHA256(bin)
	if err != nil {
		return Build{}, err
	}
	return Build{Commit: commit, GoVersion: info.GoVersion, SHA256: sum}, nil
}

// checkStamp checks that the binary at path is stamped with commit and an unmodified tree.
func checkStamp(path, commit string) error {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != commit || modified != "false" {
		return fmt.Errorf("rebuild: %s is stamped with commit %q, modified %q; want %s, false", path, rev, modified, commit)
	}
	return nil
}

// git runs git with args in dir ("" for the current directory) and returns its trimmed output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// fileSHA256 is the hex SHA-256 of the file at path.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("rebuild: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("rebuild: hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
