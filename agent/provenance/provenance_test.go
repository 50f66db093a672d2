package provenance

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"
)

func boolp(b bool) *bool { return &b }

func TestBuildVCS(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings []debug.BuildSetting
		commit   string
		dirty    *bool
	}{
		{"stamped clean", []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}, "abc", boolp(false)},
		{"stamped dirty", []debug.BuildSetting{{Key: "vcs.revision", Value: "def"}, {Key: "vcs.modified", Value: "true"}}, "def", boolp(true)},
		{"unstamped", []debug.BuildSetting{{Key: "-buildvcs", Value: "false"}}, "", nil},
	} {
		commit, dirty := buildVCS(tc.settings)
		if commit != tc.commit || (dirty == nil) != (tc.dirty == nil) || (dirty != nil && *dirty != *tc.dirty) {
			t.Errorf("%s: %q %v, want %q %v", tc.name, commit, dirty, tc.commit, tc.dirty)
		}
	}
}

// needGit skips (or, under CI=true, fails) a test that needs the git command.
func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("git is not installed: %v", err)
		}
		t.Skipf("git is not installed: %v", err)
	}
}

func TestGitCheckout(t *testing.T) {
	needGit(t)
	ctx := context.Background()
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	for _, tc := range []struct {
		name   string
		gomod  string
		edit   bool
		ok     bool
		dirty  bool
		subdir bool
	}{
		{"clean", "module " + modulePath + "\n\ngo 1.26\n", false, true, false, false},
		{"dirty, from a subdirectory", "module " + modulePath + "\n", true, true, true, true},
		{"another project", "module example.com/other\n", false, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			git(dir, "init", "-q")
			if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(tc.gomod), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			git(dir, "add", "go.mod")
			git(dir, "commit", "-q", "-m", "x")
			head := git(dir, "rev-parse", "HEAD")
			if tc.edit {
				if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(tc.gomod+"// edited\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			at := dir
			if tc.subdir {
				at = filepath.Join(dir, "sub")
			}
			top, commit, dirty, err := gitCheckout(ctx, at)
			if !tc.ok {
				if err == nil {
					t.Fatalf("checkout of another module accepted: %s", commit)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if commit != head || dirty != tc.dirty || filepath.Base(top) != filepath.Base(dir) {
				t.Errorf("%s %s %v, want %s %s %v", top, commit, dirty, dir, head, tc.dirty)
			}
		})
	}
}

func TestCollectDescribesThisProcess(t *testing.T) {
	s := Collect(context.Background(), "gonum (pure Go)", 3)
	if s.GoVersion != runtime.Version() || s.Cores != runtime.NumCPU() || s.BLAS != "gonum (pure Go)" || s.FromIteration != 3 || s.Host == "" {
		t.Errorf("session %+v", s)
	}
	// The tests run inside this project's checkout, so the commit is known when git is there.
	if _, err := exec.LookPath("git"); err == nil && (len(s.Commit) != 40 || s.Dirty == nil) {
		t.Errorf("commit %q dirty %v from %q", s.Commit, s.Dirty, s.CommitSource)
	}
}

// The binary's hash is the executable's, checked against a hash computed apart from the package.
func TestCollectHashesTheExecutable(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%x", sha256.Sum256(data))
	if got := Collect(context.Background(), "b", 0).BinarySHA256; got != want {
		t.Errorf("BinarySHA256 %q, want %q", got, want)
	}
	path := filepath.Join(t.TempDir(), "abc")
	if err := os.WriteFile(path, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	// FIPS 180-2's test vector for "abc".
	if got, err := fileSHA256(path); err != nil || got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("fileSHA256(abc) = %q, %v", got, err)
	}
	if _, err := fileSHA256(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing file hashed without an error")
	}
}

func TestAppendKeepsOneSessionPerProcess(t *testing.T) {
	dir := t.TempDir()
	if _, err := Read(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("empty dir: %v", err)
	}
	at := func(from int, commit string) Session {
		return Session{Started: time.Unix(int64(from), 0).UTC(), FromIteration: from, Commit: commit, Dirty: boolp(false), GoVersion: "go1", BLAS: "b", Host: "h", Cores: 2}
	}
	for _, s := range []Session{at(0, "aaa"), at(10, "bbb"), at(20, "bbb"), at(15, "ccc")} { // the last resumed from a fallback
		if err := Append(dir, s); err != nil {
			t.Fatal(err)
		}
	}
	f, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	var froms []int
	for _, s := range f.Sessions {
		froms = append(froms, s.FromIteration)
	}
	if len(froms) != 3 || froms[0] != 0 || froms[1] != 10 || froms[2] != 15 {
		t.Errorf("sessions from %v, want [0 10 15]", froms)
	}
	if got := f.Describe(); !strings.Contains(got, "work tree ccc (clean)") || !strings.Contains(got, "last of 3 sessions, from different commits") {
		t.Errorf("Describe: %q", got)
	}
}

func TestSummary(t *testing.T) {
	base := Session{GoVersion: "go1.26.8", OS: "linux", Arch: "amd64", BLAS: "openblas", Host: "h", Cores: 8}
	for _, tc := range []struct {
		name string
		edit func(*Session)
		want string
	}{
		{"unknown commit", func(*Session) {}, "commit unknown, go1.26.8 linux/amd64, BLAS openblas, host h (8 cores)"},
		{"unstamped binary in a dirty tree, remote envs", func(s *Session) {
			s.Commit, s.Dirty, s.CommitSource = "0123456789abcdef0123", boolp(true), "git /src"
			s.EnvServer = map[string]string{"gymnasium": "1.4.0", "numpy": "2.4.6", "python": "3.11"}
		}, "binary unstamped, work tree 0123456789ab (dirty), go1.26.8 linux/amd64, BLAS openblas, host h (8 cores); env server gymnasium 1.4.0, numpy 2.4.6"},
		{"unstamped binary with its hash", func(s *Session) {
			s.Commit, s.Dirty, s.CommitSource = "0123456789abcdef0123", boolp(false), "git /src"
			s.BinarySHA256 = "78d8fc45c27aac1dbd5ecc99e3c45a291f324f52d5ab464bd73240108133d948"
		}, "binary unstamped (sha256 78d8fc45c27a), work tree 0123456789ab (clean), go1.26.8 linux/amd64, BLAS openblas, host h (8 cores)"},
		{"stamped binary run in another tree", func(s *Session) {
			s.Commit, s.Dirty, s.CommitSource = "ffff456789abcdef0123", boolp(true), "git /src"
			s.BinaryCommit, s.BinaryDirty = "aaaa456789abcdef0123", boolp(false)
		}, "binary aaaa456789ab (clean), go1.26.8 linux/amd64, BLAS openblas, host h (8 cores)"},
		{"a file from before binary_commit, stamped", func(s *Session) {
			s.Commit, s.Dirty, s.CommitSource = "bbbb456789abcdef0123", boolp(false), "build"
		}, "binary bbbb456789ab (clean), go1.26.8 linux/amd64, BLAS openblas, host h (8 cores)"},
	} {
		s := base
		tc.edit(&s)
		if got := s.Summary(); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	if got := (File{}).Describe(); got != "provenance: none recorded" {
		t.Errorf("empty file: %q", got)
	}
}

// Commands gives each session's command line with the program named pcl, quoting what a shell
// would split or expand, and leaves out sessions that recorded none.
func TestCommands(t *testing.T) {
	f := File{Sessions: []Session{
		{Command: []string{"/root/bin/pcl-cur", "train", "--out", "runs/a b", "--seed", "1"}},
		{},
		{Command: []string{"./pcl", "train", "--out", "it's", "--resume", "--iters", "10"}},
	}}
	want := []string{`pcl train --out 'runs/a b' --seed 1`, `pcl train --out 'it'\''s' --resume --iters 10`}
	if got := f.Commands(); !slices.Equal(got, want) {
		t.Errorf("Commands() = %q, want %q", got, want)
	}
	if got := (File{}).Commands(); len(got) != 0 {
		t.Errorf("no sessions: %q", got)
	}
}

// Reading the checkout's state never writes its index: git status would refresh it (under
// .git/index.lock) after a file's timestamp changed, and a run killed meanwhile would leave the
// lock behind.
func TestGitCheckoutLeavesTheIndexAlone(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	git("init", "-q")
	gomod := filepath.Join(dir, "go.mod")
	if err := os.WriteFile(gomod, []byte("module "+modulePath+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "go.mod")
	git("commit", "-q", "-m", "x")
	// The same content with a new timestamp: the index's stat data is stale.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(gomod, later, later); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, ".git", "index")
	before, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, dirty, err := gitCheckout(context.Background(), dir); err != nil || dirty {
		t.Fatalf("dirty %v, err %v: want a clean checkout", dirty, err)
	}
	after, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("reading the checkout's state rewrote .git/index")
	}
}

// The CPU model is the first "model name" of /proc/cpuinfo, and empty where the file has none.
func TestCPUModel(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, content, want string }{
		{"x86", "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9B14\nprocessor\t: 1\nmodel name\t: AMD EPYC 9B14\n", "AMD EPYC 9B14"},
		{"none", "processor\t: 0\nBogoMIPS\t: 50.00\n", ""},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := cpuModel(path); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := cpuModel(filepath.Join(dir, "missing")); got != "" {
		t.Errorf("missing file: %q", got)
	}
}

// Only binaries stamped from clean trees, in every session, pin a run's code.
func TestCleanBuild(t *testing.T) {
	clean := Session{BinaryCommit: "aaa", BinaryDirty: boolp(false)}
	for _, tc := range []struct {
		name     string
		sessions []Session
		want     bool
	}{
		{"no sessions", nil, false},
		{"stamped, clean", []Session{clean}, true},
		{"stamped in a file from before binary_commit", []Session{{Commit: "bbb", Dirty: boolp(false), CommitSource: "build"}}, true},
		{"a resume from a dirty build", []Session{clean, {BinaryCommit: "ccc", BinaryDirty: boolp(true)}}, false},
		{"unstamped, in a clean work tree", []Session{{Commit: "ddd", Dirty: boolp(false), CommitSource: "git /src"}}, false},
	} {
		if got := (File{Sessions: tc.sessions}).CleanBuild(); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
