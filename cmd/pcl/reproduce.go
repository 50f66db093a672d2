package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"

	"github.com/sparsepcl/sparsepcl/agent/memory"
	"github.com/sparsepcl/sparsepcl/agent/provenance"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/envs/registry"
	"github.com/sparsepcl/sparsepcl/internal/envmaker"
	"github.com/sparsepcl/sparsepcl/internal/lab/rebuild"
	"github.com/sparsepcl/sparsepcl/internal/lab/reproduce"
)

// reproduceOutEnv hands the child process of pcl reproduce the directory to train into: the child
// is a pcl binary (this one, or the rebuilt one of the run's commit) with the recorded BLAS
// setting in its environment before any BLAS loads.
const reproduceOutEnv = reproduce.ChildOutEnv

// errNotReproduced is a reproduction whose metrics part from the recorded run's (exit 1).
var errNotReproduced = errors.New("not reproduced")

// runReproduce re-runs the first iterations of a recorded run with its recorded BLAS setting, by
// the binary of the run's commit (rebuilt into the user cache when it is not this one) or, with
// --here, by this binary, and compares the metrics cell by cell.
func runReproduce(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("reproduce", stderr)
	dir := fs.String("run", "", "run `directory` to reproduce (its config.json, run.json and metrics.csv)")
	iters := fs.Int("iters", 200, "iterations to re-run and compare (at most the run's)")
	core := fs.String("blas-core", "", "force this OpenBLAS `core` type instead of the recorded one (to see where the runs part)")
	here := fs.Bool("here", false, "re-run with this binary even when another commit made the run (a comparison across versions)")
	var server serverFlags
	server.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dir == "" {
		return usageError{errors.New("--run is required")}
	}
	if *iters < 1 {
		return usageError{fmt.Errorf("--iters %d: want >= 1", *iters)}
	}
	if out := os.Getenv(reproduceOutEnv); out != "" {
		return reproduceChild(ctx, *dir, out, *iters, server)
	}
	st, err := reproduce.Recorded(*dir)
	if err != nil {
		return err
	}
	n, err := comparableIters(stdout, *dir, *iters)
	if err != nil {
		return err
	}
	if *core != "" {
		st.Core = *core
	}
	choice, err := reproduce.Choose(st.Session, ownStamp(), *here)
	if err != nil {
		return err
	}
	rerun := reproduce.Rerun{Dir: *dir, Iters: n, Setting: st, Extra: serverArgs(server)}
	across := ""
	if choice.Self {
		if choice.Across {
			across = "across versions: "
			describeVersions(stdout, st.Session)
		}
		if rerun.Exe, err = os.Executable(); err != nil {
			return fmt.Errorf("reproduce: %w", err)
		}
	} else {
		b, err := rebuiltBinary(ctx, stdout, st.Session, choice.Commit)
		if err != nil {
			return err
		}
		rerun.Exe, rerun.Protocol = b.Path, reproduce.ProtocolOf(b.Tree)
	}
	fmt.Fprintf(stdout, "re-running %d iterations of %s with %v\n", n, *dir, st.Env())
	tmp, err := os.MkdirTemp("", "sparsepcl-reproduce-")
	if err != nil {
		return fmt.Errorf("reproduce: %w", err)
	}
	defer os.RemoveAll(tmp)
	rerun.Out = filepath.Join(tmp, "run")
	if err := rerun.Run(ctx); err != nil {
		return err
	}
	compareServers(stdout, st.Session, rerun.Out)
	d, err := reproduce.Compare(*dir, rerun.Out, n)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s%s\n", across, d)
	if !d.Identical {
		return errNotReproduced
	}
	return nil
}

// comparableIters is how many of the first iters iterations of the run in dir can be compared: those
// it has, made by the binary that started it (it says so when a later binary made some).
func comparableIters(stdout io.Writer, dir string, iters int) (int, error) {
	rows, err := runstore.Dir(dir).Metrics()
	if err != nil {
		return 0, err
	}
	n := min(iters, len(rows))
	if f, err := provenance.Read(dir); err == nil {
		if span, s := reproduce.FirstSpan(f, n); s != nil && span < n {
			fmt.Fprintf(stdout, "iterations from %d on were made by another binary (%s): comparing the first %d\n", s.FromIteration, s.Summary(), span)
			n = span
		}
	}
	if n < 1 {
		return 0, fmt.Errorf("reproduce: %s has no iterations made by its first binary to compare", dir)
	}
	return n, nil
}

// rebuiltBinary is the binary of commit, from the build cache (built there when missing), from
// the repository of the checkout holding the working directory.
func rebuiltBinary(ctx context.Context, w io.Writer, s provenance.Session, commit string) (rebuild.Build, error) {
	cache, err := rebuild.DefaultCache()
	if err != nil {
		return rebuild.Build{}, err
	}
	fmt.Fprintf(w, "the run was made by binary %s, this is %s: re-running with %s's build\n", short(commit), stampText(ownStamp()), short(commit))
	b, err := cache.Get(ctx, ".", commit, w)
	if err != nil {
		return rebuild.Build{}, err
	}
	fmt.Fprintf(w, "binary %s (%s, sha256 %s)\n", b.Path, b.GoVersion, b.SHA256[:12])
	if s.GoVersion != "" && s.GoVersion != b.GoVersion {
		fmt.Fprintf(w, "the run's binary was built by %s, this one by %s: the toolchain differs\n", s.GoVersion, b.GoVersion)
	}
	return b, nil
}

// stampText names a binary by its stamp: "1a2b3c4d5e6f", "1a2b3c4d5e6f (modified)" or "an
// unstamped build".
func stampText(st reproduce.Stamp) string {
	switch {
	case st.Commit == "":
		return "an unstamped build"
	case st.Modified:
		return short(st.Commit) + " (modified)"
	}
	return short(st.Commit)
}

// ownStamp is this binary's VCS stamp.
func ownStamp() reproduce.Stamp {
	var st reproduce.Stamp
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, kv := range info.Settings {
			switch kv.Key {
			case "vcs.revision":
				st.Commit = kv.Value
			case "vcs.modified":
				st.Modified = kv.Value == "true"
			}
		}
	}
	return st
}

// reproduceChild trains the run's config for iters iterations into out (this process's
// environment holds the recorded BLAS setting).
func reproduceChild(ctx context.Context, dir, out string, iters int, server serverFlags) error {
	cfg, err := runstore.Dir(dir).Config()
	if err != nil {
		return err
	}
	cfg.Iters = iters
	maker := &envmaker.Maker{Registry: registry.Default(), Server: server.options()}
	f, err := provenance.Read(dir)
	if err == nil && len(f.Sessions) > 0 && slices.Contains(f.Sessions[0].Command, "--remote") {
		maker.ForceRemote = true
	}
	_, err = train.Run(ctx, cfg, train.Options{Dir: out, Registry: maker.Registry, Envs: train.FactoryEnvs{Factory: maker},
		MaxMemory: memory.NoLimit(), Logger: slog.New(slog.DiscardHandler)})
	return err
}

// describeVersions says how this binary differs from the one that made the run.
func describeVersions(w io.Writer, s provenance.Session) {
	if recorded, _, ok := s.Built(); ok {
		fmt.Fprintf(w, "the run was made by binary %s, this is %s: the comparison is across versions\n", short(recorded), stampText(ownStamp()))
		return
	}
	fmt.Fprintf(w, "the run's binary carried no build stamp (its work tree was %s): the comparison is across versions unless that was this build\n", short(s.Commit))
}

// compareServers says when the env server that served the re-run reports other versions than the
// recorded one's.
func compareServers(w io.Writer, s provenance.Session, out string) {
	f, err := provenance.Read(out)
	if err != nil || len(f.Sessions) == 0 || s.EnvServer == nil {
		return
	}
	for _, k := range []string{"gymnasium", "mujoco", "numpy"} {
		if a, b := s.EnvServer[k], f.Sessions[0].EnvServer[k]; a != b {
			fmt.Fprintf(w, "the env server's %s is %s, the run's was %s: trajectories may differ\n", k, b, a)
		}
	}
}

// serverArgs are the flags that pass f on to the child.
func serverArgs(f serverFlags) []string {
	var out []string
	if *f.allowImports {
		out = append(out, "--allow-imports")
	}
	for _, m := range f.modules {
		out = append(out, "--env-module", m)
	}
	return out
}

// short is a commit's first 12 digits ("unknown" for none).
func short(c string) string {
	if c == "" {
		return "unknown"
	}
	return c[:min(12, len(c))]
}
