package reproduce

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/provenance"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
)

// ChildOutEnv hands a pcl reproduce child the directory to train into: the child is a pcl binary
// run as "pcl reproduce --run DIR --iters N" with the recorded setting in its environment before
// any BLAS loads, and it trains DIR's config.json for N iterations into this directory. Binaries
// from before commit 73be93c do not know it (see Protocol).
const ChildOutEnv = "SPARSEPCL_REPRODUCE_OUT"

// RerunTimeout bounds one re-run: a few hundred iterations of the largest committed runs.
const RerunTimeout = 2 * time.Hour

// Protocol is how a binary is asked to re-run a recorded run.
type Protocol int

const (
	// Child: "pcl reproduce --run DIR --iters N" with ChildOutEnv set: the binary reads the
	// run's config.json itself.
	Child Protocol = iota
	// TrainCommand: the run's recorded "pcl train" command line, with --out and --iters
	// appended (the last of a repeated flag wins): for binaries older than the child protocol.
	TrainCommand
)

// ProtocolOf is the protocol the source tree at tree (a checkout of some commit) speaks: Child
// when its pcl reproduce knows ChildOutEnv, else TrainCommand.
func ProtocolOf(tree string) Protocol {
	src, err := os.ReadFile(filepath.Join(tree, "cmd", "pcl", "reproduce.go"))
	if err == nil && bytes.Contains(src, []byte(ChildOutEnv)) {
		return Child
	}
	return TrainCommand
}

// Rerun is one re-run of the recorded run in Dir by the binary Exe, into Out.
type Rerun struct {
	Exe      string
	Protocol Protocol
	Dir      string // the recorded run
	Out      string // the directory to train into (must not exist)
	Iters    int
	Setting  Setting
	Extra    []string // flags for a Child (the env server's)
}

// Run re-runs, within RerunTimeout, and returns the child's output on failure in the error.
func (r Rerun) Run(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, RerunTimeout)
	defer cancel()
	args, env, err := r.command()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, r.Exe, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 10 * time.Second
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("reproduce: the re-run (%s %s) failed: %w\n%s", r.Exe, strings.Join(args, " "), err, msg)
	}
	if r.Protocol == TrainCommand {
		return SameConfig(r.Dir, r.Out)
	}
	return nil
}

// command is the child's arguments and the environment it adds.
func (r Rerun) command() ([]string, []string, error) {
	env := r.Setting.Env()
	n := strconv.Itoa(r.Iters)
	switch r.Protocol {
	case Child:
		return append([]string{"reproduce", "--run", r.Dir, "--iters", n}, r.Extra...), append(env, ChildOutEnv+"="+r.Out), nil
	case TrainCommand:
		c := r.Setting.Session.Command
		if len(c) < 2 || c[1] != "train" {
			return nil, nil, fmt.Errorf("reproduce: %s was started by %q, not pcl train, and its binary predates pcl reproduce (73be93c): "+
				"there is no command line to re-run it with", r.Dir, strings.Join(c, " "))
		}
		args := append(slices.Clone(c[1:]), "--out", r.Out, "--iters", n, "--progress-every", "0")
		return args, env, nil
	}
	return nil, nil, fmt.Errorf("reproduce: unknown protocol %d", r.Protocol)
}

// SameConfig checks that the re-run in out resolved the same config.json as the recorded run in
// dir, every key but the iterations: a re-run from a command line must train what was trained.
func SameConfig(dir, out string) error {
	read := func(d string) (map[string]json.RawMessage, error) {
		data, err := os.ReadFile(runstore.Dir(d).File(runstore.ConfigFile))
		if err != nil {
			return nil, fmt.Errorf("reproduce: %w", err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("reproduce: %s: %w", d, err)
		}
		return m, nil
	}
	a, err := read(dir)
	if err != nil {
		return err
	}
	b, err := read(out)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range slices.Compact(keys) {
		if k == "iters" {
			continue
		}
		if !bytes.Equal(a[k], b[k]) {
			return fmt.Errorf("reproduce: the re-run's config differs from the recorded one at %s: recorded %s, re-run %s", k, orNone(a[k]), orNone(b[k]))
		}
	}
	return nil
}

func orNone(v json.RawMessage) string {
	if v == nil {
		return "(none)"
	}
	return string(v)
}

// FirstSpan is how many of the run's first iterations its first session's binary made: up to
// where a later session with another binary took over (all of them when none did), and that
// session.
func FirstSpan(f provenance.File, rows int) (int, *provenance.Session) {
	if len(f.Sessions) == 0 {
		return rows, nil
	}
	first, _, _ := f.Sessions[0].Built()
	for i := 1; i < len(f.Sessions); i++ {
		s := f.Sessions[i]
		c, _, _ := s.Built()
		if c != first || (c == "" && s.BinarySHA256 != f.Sessions[0].BinarySHA256) {
			return min(rows, s.FromIteration), &f.Sessions[i]
		}
	}
	return rows, nil
}

// Stamp is a binary's VCS stamp: its commit ("" when it has none) and whether its tree was
// modified.
type Stamp struct {
	Commit   string
	Modified bool
}

// Choice is which binary re-runs a run: this one (Self), or the build of Commit.
type Choice struct {
	Self bool
	// Across: this binary is not the one that made the run (with --here, or Self by default
	// when the two are the same commit, clean, it is false).
	Across bool
	Commit string // the commit to build when not Self
}

// Choose decides which binary re-runs a run whose first session is s, this binary being mine:
// this one when it was built from the run's commit, clean, or when here asks for it (a
// comparison across versions when they differ); else the build of the run's commit. A run whose
// binary carried no stamp, or was built from a modified tree, is an error naming what is missing.
func Choose(s provenance.Session, mine Stamp, here bool) (Choice, error) {
	recorded, dirty, ok := s.Built()
	same := ok && recorded == mine.Commit && !mine.Modified && dirty != nil && !*dirty
	switch {
	case here:
		return Choice{Self: true, Across: !same}, nil
	case same:
		return Choice{Self: true}, nil
	case !ok:
		where := "no work tree recorded"
		if s.Commit != "" {
			where = "it ran in a work tree at " + s.Commit
			if s.Dirty != nil && *s.Dirty {
				where += " with changes"
			}
		}
		return Choice{}, fmt.Errorf("reproduce: the run's binary carried no VCS stamp (run.json has no binary_commit; %s): "+
			"the commit that built it is unknown, so it cannot be rebuilt; --here compares with this binary (across versions)", where)
	case dirty == nil:
		return Choice{}, fmt.Errorf("reproduce: the run's binary names commit %s but not whether its tree was modified "+
			"(run.json has no binary_dirty): it cannot be rebuilt faithfully; --here compares with this binary (across versions)", recorded)
	case *dirty:
		return Choice{}, fmt.Errorf("reproduce: the run's binary was built from a modified tree of commit %s (binary_dirty true): "+
			"its changes were not recorded, so no commit holds its code; --here compares with this binary (across versions)", recorded)
	}
	return Choice{Commit: recorded, Across: false}, nil
}
