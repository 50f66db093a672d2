// Package provenance records what produced a run: the binary's own commit (its VCS stamp) and the
// work tree's it ran in, each with whether it was dirty, the Go toolchain, the BLAS backend, the
// host, its CPU model and cores, and the versions of the env server for remote envs. A run directory's run.json holds one Session per process that trained
// it: the first, then one per resume, each with the iteration it started from.
package provenance

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/atomicfile"
)

// FileName is the provenance file in a run directory.
const FileName = "run.json"

// modulePath identifies a checkout of this project (the first line of its go.mod).
const modulePath = "github.com/sparsepcl/sparsepcl"

// Session is the provenance of one process's part of a run.
type Session struct {
	Started       time.Time `json:"started"`
	FromIteration int       `json:"from_iteration"`
	Command       []string  `json:"command,omitempty"`
	// Commit is a git commit ("" when unknown) and Dirty whether its tree had changes (nil when
	// unknown), read where CommitSource says: "git <dir>", the checkout the program ran in (its
	// work tree), or, in files written before BinaryCommit was, "build", the binary's stamp.
	Commit       string `json:"commit"`
	Dirty        *bool  `json:"dirty"`
	CommitSource string `json:"commit_source,omitempty"`
	// BinaryCommit and BinaryDirty are the commit the binary was built from and whether that tree
	// had changes, from the binary's own VCS stamp (empty and nil for a binary built without one:
	// go build -buildvcs=false, or outside a checkout). A binary built yesterday and run in
	// today's checkout names yesterday's commit here and today's in Commit.
	BinaryCommit string `json:"binary_commit,omitempty"`
	BinaryDirty  *bool  `json:"binary_dirty,omitempty"`
	// BinarySHA256 is the hex SHA-256 of the executable file: it names the binary even without a
	// VCS stamp, and a rebuild of a commit that hashes the same is the same binary (Go builds are
	// reproducible given the commit, toolchain and build directory).
	BinarySHA256 string `json:"binary_sha256,omitempty"`
	GoVersion    string `json:"go_version"`
	OS           string `json:"os"`
	Arch         string `json:"arch"`
	BLAS         string `json:"blas"`
	Host         string `json:"host"`
	CPU          string `json:"cpu,omitempty"` // the CPU model (/proc/cpuinfo), which picks the BLAS kernel
	Cores        int    `json:"cores"`         // runtime.NumCPU
	GOMAXPROCS   int    `json:"gomaxprocs"`    // the Go threads that run at once
	// EnvServer holds the versions reported by the env server for remote envs (gymnasium, mujoco,
	// numpy, python, server, protocol); nil for Go-native envs.
	EnvServer map[string]string `json:"env_server,omitempty"`
}

// File is the content of run.json.
type File struct {
	Sessions []Session `json:"sessions"`
}

// Collect describes this process: blas names the BLAS backend in use, from the iteration the
// process starts at. The binary's commit comes from its VCS stamp; the work tree's from the git
// checkout of this project that holds the working directory (when git is there).
func Collect(ctx context.Context, blas string, from int) Session {
	s := Session{Started: time.Now().UTC().Truncate(time.Second), FromIteration: from, Command: os.Args,
		GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, BLAS: blas,
		CPU: cpuModel("/proc/cpuinfo"), Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	s.Host, _ = os.Hostname()
	if info, ok := debug.ReadBuildInfo(); ok {
		s.BinaryCommit, s.BinaryDirty = buildVCS(info.Settings)
	}
	if exe, err := os.Executable(); err == nil {
		s.BinarySHA256, _ = fileSHA256(exe) // "" when unreadable: the stamp and the tree still say much
	}
	if wd, err := os.Getwd(); err == nil {
		if dir, commit, dirty, err := gitCheckout(ctx, wd); err == nil {
			s.Commit, s.Dirty, s.CommitSource = commit, &dirty, "git "+dir
		}
	}
	return s
}

// fileSHA256 is the hex SHA-256 of the file at path.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("provenance: hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// cpuModel is the first "model name" of a /proc/cpuinfo file ("" where there is none).
func cpuModel(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(data)) {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Built is the commit that built the session's binary and whether its tree was dirty: the binary's
// stamp, or, in files written before it was recorded, the commit read from the stamp then; ok is
// false when the binary had none (the work tree's commit is then all there is).
func (s Session) Built() (commit string, dirty *bool, ok bool) {
	switch {
	case s.BinaryCommit != "":
		return s.BinaryCommit, s.BinaryDirty, true
	case s.CommitSource == "build" && s.Commit != "":
		return s.Commit, s.Dirty, true
	}
	return "", nil, false
}

// buildVCS reads the commit and modified flag from a binary's build settings.
func buildVCS(settings []debug.BuildSetting) (string, *bool) {
	var commit string
	var dirty *bool
	for _, kv := range settings {
		switch kv.Key {
		case "vcs.revision":
			commit = kv.Value
		case "vcs.modified":
			d := kv.Value == "true"
			dirty = &d
		}
	}
	return commit, dirty
}

// gitCheckout returns the top directory, HEAD commit and dirty flag (any change, untracked files
// included, as Go's VCS stamp counts them) of the checkout of this project holding dir.
func gitCheckout(ctx context.Context, dir string) (top, commit string, dirty bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return strings.TrimSpace(out.String()), nil
	}
	if top, err = git("rev-parse", "--show-toplevel"); err != nil {
		return "", "", false, err
	}
	mod, err := os.ReadFile(filepath.Join(top, "go.mod"))
	if err != nil || !bytes.HasPrefix(mod, []byte("module "+modulePath+"\n")) {
		return "", "", false, fmt.Errorf("provenance: %s is not a checkout of %s", top, modulePath)
	}
	if commit, err = git("rev-parse", "HEAD"); err != nil {
		return "", "", false, err
	}
	// Without optional locks: status would otherwise refresh the index under .git/index.lock,
	// and a run killed in that moment (kill -9, the timeout) would leave the lock behind and
	// block every later git command in the checkout.
	status, err := git("--no-optional-locks", "status", "--porcelain")
	if err != nil {
		return "", "", false, err
	}
	return top, commit, status != "", nil
}

// Read returns the sessions of the run in dir (os.ErrNotExist when it has no run.json: runs
// written before provenance was recorded).
func Read(dir string) (File, error) {
	var f File
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		return f, fmt.Errorf("provenance: %w", err)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return f, fmt.Errorf("provenance: %s: %w", filepath.Join(dir, FileName), err)
	}
	return f, nil
}

// Append adds s to dir's run.json (created when missing), replacing the file atomically. Sessions
// that started at or after s's iteration are dropped: their iterations are being recomputed.
func Append(dir string, s Session) error {
	f, err := Read(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f.Sessions = slices.DeleteFunc(f.Sessions, func(old Session) bool { return old.FromIteration >= s.FromIteration })
	f.Sessions = append(f.Sessions, s)
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("provenance: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, FileName), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("provenance: %w", err)
	}
	return nil
}

// Summary is a one-line account of s: "binary 1a2b3c4d5e6f (clean), go1.26.8 linux/amd64, BLAS
// openblas, host h (8 cores); env server gymnasium 1.4.0, mujoco 4.0.0, numpy 2.4.6". A binary
// without a VCS stamp is named by the work tree it ran in: "binary unstamped, work tree
// 1a2b3c4d5e6f (dirty)", which says where it ran, not what it was built from.
func (s Session) Summary() string {
	var b strings.Builder
	if commit, dirty, ok := s.Built(); ok {
		b.WriteString("binary " + commitText(commit, dirty))
	} else if s.Commit != "" {
		b.WriteString("binary unstamped")
		if len(s.BinarySHA256) >= 12 {
			b.WriteString(" (sha256 " + s.BinarySHA256[:12] + ")")
		}
		b.WriteString(", work tree " + commitText(s.Commit, s.Dirty))
	} else {
		b.WriteString("commit unknown")
	}
	fmt.Fprintf(&b, ", %s %s/%s, BLAS %s, host %s (%d cores)", s.GoVersion, s.OS, s.Arch, s.BLAS, s.Host, s.Cores)
	if len(s.EnvServer) > 0 {
		var parts []string
		for _, k := range []string{"gymnasium", "mujoco", "numpy"} {
			if v := s.EnvServer[k]; v != "" {
				parts = append(parts, k+" "+v)
			}
		}
		b.WriteString("; env server " + strings.Join(parts, ", "))
	}
	return b.String()
}

// CleanBuild reports whether every session's binary carries a VCS stamp of a clean tree: only
// then do the commits in the file pin the code that made the run. No sessions: false.
func (f File) CleanBuild() bool {
	for _, s := range f.Sessions {
		if _, dirty, ok := s.Built(); !ok || dirty == nil || *dirty {
			return false
		}
	}
	return len(f.Sessions) > 0
}

// commitText is a commit's first 12 digits with its tree's state: "1a2b3c4d5e6f (dirty)".
func commitText(commit string, dirty *bool) string {
	if len(commit) > 12 {
		commit = commit[:12]
	}
	switch {
	case dirty == nil:
		return commit
	case *dirty:
		return commit + " (dirty)"
	}
	return commit + " (clean)"
}

// Line is the one-line provenance of the run in dir, from its run.json; a run without one, or
// with an unreadable one, says so.
func Line(dir string) string {
	f, err := Read(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "provenance: none recorded (the run has no run.json: it predates provenance)"
	case err != nil:
		return fmt.Sprintf("provenance: unreadable: %v", err)
	}
	return f.Describe()
}

// Describe is the lines `pcl eval` and `pcl report` print for a run: its last session's Summary,
// and how many sessions (resumes) made it when more than one, naming the commits when they differ.
func (f File) Describe() string {
	if len(f.Sessions) == 0 {
		return "provenance: none recorded"
	}
	last := f.Sessions[len(f.Sessions)-1]
	line := "provenance: " + last.Summary()
	if n := len(f.Sessions); n > 1 {
		commits := map[string]bool{}
		for _, s := range f.Sessions {
			c, _, ok := s.Built()
			if !ok {
				c = s.Commit
			}
			commits[c] = true
		}
		line += fmt.Sprintf(" (last of %d sessions", n)
		if len(commits) > 1 {
			line += ", from different commits: see run.json"
		}
		line += ")"
	}
	return line
}

// Commands are the command lines that made the run, one per session, each as a shell would take
// it with the program named "pcl" (the binary's own name varies): the first trains it, any
// later ones resume it. Sessions that recorded none are left out.
func (f File) Commands() []string {
	var out []string
	for _, s := range f.Sessions {
		if len(s.Command) == 0 {
			continue
		}
		args := []string{"pcl"}
		for _, a := range s.Command[1:] {
			if a == "" || strings.ContainsAny(a, " \t'\"$`\\*?|&;<>()") {
				a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
			}
			args = append(args, a)
		}
		out = append(out, strings.Join(args, " "))
	}
	return out
}
