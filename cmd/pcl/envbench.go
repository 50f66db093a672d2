package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/sparsepcl/sparsepcl/bridge"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
)

// runEnvBench measures, side by side in one run, in-process Gymnasium stepping against the bridge with
// one and two servers, the bridge's transport cost per env-step, and Go-native against Python-served
// algorithmic envs.
func runEnvBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("envbench", stderr)
	envID := fs.String("env", "HalfCheetah-v5", "Gymnasium env for the in-process vs bridge comparison")
	n := fs.Int("n", 16, "copies per batch")
	steps := fs.Int("steps", 1000, "batched steps per measurement")
	python := fs.String("python", "", "Python interpreter (default: $SPARSEPCL_PYTHON, .venv/bin/python, python3)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *n < 2 || *steps < 10 {
		return usageError{fmt.Errorf("need -n >= 2 and -steps >= 10")}
	}
	root, err := bridge.FindRoot()
	if err != nil {
		return err
	}
	py := *python
	if py == "" {
		py = bridge.FindPython(root)
	}
	opts := bridge.ServerOptions{Python: py, Root: root}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(stdout, "pcl envbench: %s, N=%d, %d steps per measurement\n\n", *envID, *n, *steps)

	anchor, err := inProcess(ctx, py, root, *envID, *n, *steps)
	if err != nil {
		return err
	}
	fmt.Fprintln(tw, "measurement\tsteps/s\tratio\t")
	fmt.Fprintf(tw, "in-process Gymnasium (anchor)\t%.0f\t1.00\t\n", anchor)
	for _, servers := range []int{1, 2} {
		sps, _, err := bridgeRate(ctx, bridge.Config{EnvID: *envID, NumEnvs: *n}, servers, opts, *steps)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "bridge, %d server(s)\t%.0f\t%.2f\t\n", servers, sps, sps/anchor)
	}
	fmt.Fprintln(tw, "\t\t\t")
	fmt.Fprintln(tw, "transport (Copy-v0)\tus per env-step\tus per batch\t")
	for _, tn := range []int{1, 16, 64} {
		_, tr, err := bridgeRate(ctx, bridge.Config{EnvID: "Copy-v0", NumEnvs: tn}, 1, opts, *steps)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "N=%d\t%.2f\t%.1f\t\n", tn, tr*1e6/float64(tn), tr*1e6)
	}
	fmt.Fprintln(tw, "\t\t\t")
	goSps, err := goNativeRate(*n, *steps*10)
	if err != nil {
		return err
	}
	pyIn, err := inProcess(ctx, py, root, "Copy-v0", *n, *steps)
	if err != nil {
		return err
	}
	pyBridge, _, err := bridgeRate(ctx, bridge.Config{EnvID: "Copy-v0", NumEnvs: *n}, 1, opts, *steps)
	if err != nil {
		return err
	}
	fmt.Fprintln(tw, "Copy-v0\tsteps/s\tGo-native / this\t")
	fmt.Fprintf(tw, "Go-native\t%.0f\t1.0\t\n", goSps)
	fmt.Fprintf(tw, "Python in-process\t%.0f\t%.1f\t\n", pyIn, goSps/pyIn)
	fmt.Fprintf(tw, "Python via bridge\t%.0f\t%.1f\t\n", pyBridge, goSps/pyBridge)
	return tw.Flush()
}

// inProcess runs python_server.reference bench: the same N-copy loop the server runs, without transport.
func inProcess(ctx context.Context, python, root, envID string, n, steps int) (float64, error) {
	cmd := exec.CommandContext(ctx, python, "-m", "python_server.reference", "bench", "--env", envID, "--n", strconv.Itoa(n), "--steps", strconv.Itoa(steps))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PYTHONPATH="+root)
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("in-process bench of %s: %w", envID, err)
	}
	var r struct {
		StepsPerSecond float64 `json:"steps_per_second"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return 0, fmt.Errorf("in-process bench output %q: %w", out, err)
	}
	return r.StepsPerSecond, nil
}

// bridgeRate steps a bridged VecEnv with random actions; it returns env-steps/s and the transport
// seconds per batch (wall time minus the servers' own env time; with several servers, their mean).
func bridgeRate(ctx context.Context, cfg bridge.Config, servers int, opts bridge.ServerOptions, steps int) (float64, float64, error) {
	seeds := make([]int64, cfg.NumEnvs)
	for i := range seeds {
		seeds[i] = int64(i)
	}
	cfg.Seeds = seeds
	e, err := bridge.Start(ctx, cfg, servers, opts)
	if err != nil {
		return 0, 0, err
	}
	defer e.Close()
	if _, _, err := e.Reset(ctx, envs.ResetRequest{}); err != nil {
		return 0, 0, err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	acts := make([]envs.Array, 16)
	for k := range acts {
		acts[k] = envs.NewBatch(e.ActionSpace(), cfg.NumEnvs)
		for i := range cfg.NumEnvs {
			if err := envs.WriteRow(e.ActionSpace(), acts[k], i, e.ActionSpace().Sample(rng)); err != nil {
				return 0, 0, err
			}
		}
	}
	warm := steps / 10
	var start time.Time
	envSec := 0.0
	for s := range steps + warm {
		if s == warm {
			start, envSec = time.Now(), 0
		}
		if _, err := e.Step(ctx, acts[s%len(acts)]); err != nil {
			return 0, 0, err
		}
		envSec += e.EnvSeconds / float64(servers)
	}
	wall := time.Since(start).Seconds()
	return float64(steps*cfg.NumEnvs) / wall, (wall - envSec) / float64(steps), nil
}

// goNativeRate steps the Go-native Copy-v0 with random factored actions.
func goNativeRate(n, steps int) (float64, error) {
	v, err := algorithmic.NewVecEnv(algorithmic.Config{Task: algorithmic.Copy, FactoredActions: true}, n)
	if err != nil {
		return 0, err
	}
	ctx := context.Background()
	if _, _, err := v.Reset(ctx, envs.ResetRequest{}); err != nil {
		return 0, err
	}
	rng := rand.New(rand.NewPCG(3, 4))
	acts := make([]envs.Array, 16)
	for k := range acts {
		acts[k] = envs.NewBatch(v.ActionSpace(), n)
		for i := range n {
			if err := envs.WriteRow(v.ActionSpace(), acts[k], i, v.ActionSpace().Sample(rng)); err != nil {
				return 0, err
			}
		}
	}
	start := time.Now()
	for s := range steps {
		if _, err := v.Step(ctx, acts[s%len(acts)]); err != nil {
			return 0, err
		}
	}
	return float64(steps*n) / time.Since(start).Seconds(), nil
}
