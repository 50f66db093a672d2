package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime/debug"
	"slices"
	"strconv"

	"github.com/sparsepcl/sparsepcl/agent/memory"
	"github.com/sparsepcl/sparsepcl/agent/reproduce"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/envs/registry"
	"github.com/sparsepcl/sparsepcl/internal/envmaker"
	"github.com/sparsepcl/sparsepcl/internal/provenance"
)

// reproduceOutEnv hands the child process of pcl reproduce the directory to train into: the child
// is this program with the recorded BLAS setting in its environment before any BLAS loads.
const reproduceOutEnv = "SPARSEPCL_REPRODUCE_OUT"

// errNotReproduced is a reproduction whose metrics part from the recorded run's (exit 1).
var errNotReproduced = errors.New("not reproduced")

// runReproduce re-runs the first iterations of a recorded run with its recorded BLAS setting and
// compares the metrics cell by cell.
func runReproduce(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("reproduce", stderr)
	dir := fs.String("run", "", "run `directory` to reproduce (its config.json, run.json and metrics.csv)")
	iters := fs.Int("iters", 200, "iterations to re-run and compare (at most the run's)")
	core := fs.String("blas-core", "", "force this OpenBLAS `core` type instead of the recorded one (to see where the runs part)")
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
	rows, err := runstore.Dir(*dir).Metrics()
	if err != nil {
		return err
	}
	n := min(*iters, len(rows))
	if *core != "" {
		st.Core = *core
	}
	across := describeVersions(stdout, st.Session)
	fmt.Fprintf(stdout, "re-running %d iterations of %s with %v\n", n, *dir, st.Env())
	tmp, err := os.MkdirTemp("", "sparsepcl-reproduce-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	out := tmp + "/run"
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, exe, append([]string{"reproduce", "--run", *dir, "--iters", strconv.Itoa(n)}, serverArgs(server)...)...)
	cmd.Env = append(append(os.Environ(), st.Env()...), reproduceOutEnv+"="+out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("reproduce: the re-run failed: %w\n%s", err, msg)
	}
	compareServers(stdout, st.Session, out)
	d, err := reproduce.Compare(*dir, out, n)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s%s\n", across, d)
	if !d.Identical {
		return errNotReproduced
	}
	return nil
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

// describeVersions says when this binary is not the one that made the run, and returns the prefix
// of the verdict then ("across versions: ").
func describeVersions(w io.Writer, s provenance.Session) string {
	recorded, _, ok := s.Built()
	mine := ""
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, kv := range info.Settings {
			if kv.Key == "vcs.revision" {
				mine = kv.Value
			}
		}
	}
	switch {
	case ok && mine != "" && recorded == mine:
		return ""
	case !ok:
		fmt.Fprintf(w, "the run's binary carried no build stamp (its work tree was %s): the comparison is across versions unless that was this build\n", short(s.Commit))
	default:
		fmt.Fprintf(w, "the run was made by binary %s, this is %s: the comparison is across versions\n", short(recorded), short(mine))
	}
	return "across versions: "
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
