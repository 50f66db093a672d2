package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/sparsepcl/sparsepcl/bridge"
	"github.com/sparsepcl/sparsepcl/bridge/auth"
	"github.com/sparsepcl/sparsepcl/internal/lab/launch"
)

const launchUsage = `usage: pcl launch slurm [flags] -- [pcl train flags]

  slurm   write one Slurm job: env servers on --nodes nodes as one job step (tcp, PLAIN credentials
          from --auth-file), their endpoints gathered from their ready lines, and pcl train with
          --server for each as another step; submit it with sbatch

Run 'pcl launch slurm -h' for its flags.
`

// runLaunch dispatches `pcl launch slurm` (logic in internal/lab/launch).
func runLaunch(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{errors.New("launch: give a scheduler: slurm (run 'pcl launch -h')")}
	}
	switch args[0] {
	case "slurm":
		return launchSlurm(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stderr, launchUsage)
		return flag.ErrHelp
	}
	return usageError{fmt.Errorf("launch: unknown scheduler %q (slurm)", args[0])}
}

func launchSlurm(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("launch slurm", stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: pcl launch slurm [flags] -- [pcl train flags]\n\nWrites the job; submit it with sbatch. pcl train gets --server for each env server and --auth-file.\n\nflags:\n")
		fs.PrintDefaults()
	}
	var s launch.Slurm
	fs.IntVar(&s.Nodes, "nodes", 1, "nodes, one env server on each (the learner shares the first)")
	fs.IntVar(&s.CPUs, "cpus", 1, "CPUs per env server, and for the learner")
	fs.StringVar(&s.Name, "name", "pcl-train", "job name")
	fs.StringVar(&s.Time, "time", "", "wall-time limit (sbatch --time; default: the partition's)")
	authFile := fs.String("auth-file", "", "credential `file` the servers and the learner share (mode 0600, on a file system every node sees; 'pcl auth new FILE'; default $"+auth.EnvVar+")")
	logs := fs.String("logs", "slurm-logs", "`directory` of the servers' output (their ready lines) and errors")
	python := fs.String("python", "", "interpreter of the env servers (default: $SPARSEPCL_PYTHON, .venv/bin/python)")
	pcl := fs.String("pcl", "", "pcl binary of the learner (default: this one)")
	out := fs.String("out", "", "write the job script to this `file` (default: stdout)")
	var extra stringList
	fs.Var(&extra, "sbatch", "extra #SBATCH `option`, e.g. --partition=cpu (repeatable)")
	train := []string{}
	if i := slices.Index(args, "--"); i >= 0 {
		args, train = args[:i], args[i+1:]
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	s.Train, s.Extra = train, extra
	if *authFile == "" {
		*authFile = os.Getenv(auth.EnvVar)
	}
	if *authFile == "" {
		return usageError{errors.New("launch slurm: give --auth-file FILE (or set " + auth.EnvVar + "): servers beyond loopback need credentials ('pcl auth new FILE' makes them)")}
	}
	if _, err := auth.Load(*authFile); err != nil { // refuse now, not on the nodes
		return err
	}
	root, err := bridge.FindRoot()
	if err != nil {
		return err
	}
	if *python == "" {
		*python = bridge.FindPython(root)
	}
	if *pcl == "" {
		if *pcl, err = os.Executable(); err != nil {
			return fmt.Errorf("launch slurm: this binary's path: %w", err)
		}
	}
	for _, p := range []*string{authFile, logs, python, pcl, &root} {
		if *p, err = filepath.Abs(*p); err != nil {
			return fmt.Errorf("launch slurm: %w", err)
		}
	}
	s.Root, s.Python, s.PCL, s.AuthFile, s.Out = root, *python, *pcl, *authFile, *logs
	text, err := s.Script()
	if err != nil {
		return usageError{err}
	}
	if *out == "" {
		_, err = io.WriteString(stdout, text)
		return err
	}
	if err := os.WriteFile(*out, []byte(text), 0o755); err != nil {
		return fmt.Errorf("launch slurm: %w", err)
	}
	fmt.Fprintf(stdout, "wrote %s: submit it with sbatch %s\n", *out, *out)
	return nil
}
