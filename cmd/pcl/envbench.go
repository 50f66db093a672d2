package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/sparsepcl/sparsepcl/bridge"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
)

// runEnvBench measures, side by side in one run, in-process Gymnasium stepping against the bridge with
// one and two servers (stepped in lockstep, and pipelined), the bridge's transport cost per env-step
// against a ping round trip, and Go-native against Python-served algorithmic envs.
//
// Fairness: every contender is set up once (the anchors are long-lived Python processes, the bridges
// keep their servers), then measured in many short rounds, each contender right after and right
// before a measurement of the SyncVectorEnv anchor, so a drift of the machine's speed hits both sides
// of each ratio alike; the table shows medians over the rounds (ratios: median of the per-round
// ratios) and the middle half of the rounds.
func runEnvBench(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlagSet("envbench", stderr)
	envID := fs.String("env", "HalfCheetah-v5", "Gymnasium env for the in-process vs bridge comparison")
	n := fs.Int("n", 64, "copies per batch for the in-process vs bridge comparison")
	steps := fs.Int("steps", 50, "batched steps per measurement")
	rounds := fs.Int("rounds", 25, "measurement rounds (medians are reported)")
	python := fs.String("python", "", "Python interpreter (default: $SPARSEPCL_PYTHON, .venv/bin/python, python3)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *n < 4 || *steps < 10 || *rounds < 1 {
		return usageError{fmt.Errorf("need -n >= 4 (two sub-batches per server), -steps >= 10 and -rounds >= 1")}
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
	// A signal fails whichever measurement is under way: report it as the interruption it is.
	signalled := ctx
	defer func() {
		err = interrupted(signalled, err, "envbench stopped before its tables were complete (it saves nothing)")
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Set everything up first.
	vecAnchor, err := startAnchor(ctx, py, root, "vector", *envID, *n)
	if err != nil {
		return err
	}
	defer vecAnchor.close()
	loopAnchor, err := startAnchor(ctx, py, root, "loop", *envID, *n)
	if err != nil {
		return err
	}
	defer loopAnchor.close()
	// Two bare loops of half the copies each, run at once: what two processes get out of the two
	// cores at all, the ceiling of the two-server rows.
	var pair [2]*anchorProc
	for k := range pair {
		if pair[k], err = startAnchor(ctx, py, root, "loop", *envID, max(*n/2, 1)); err != nil {
			return err
		}
		defer pair[k].close()
	}
	var cheetah []*bridgeRunner
	for _, servers := range []int{1, 2} {
		b, err := newBridgeRunner(ctx, bridge.Config{EnvID: *envID, NumEnvs: *n}, servers, opts)
		if err != nil {
			return err
		}
		defer b.close()
		cheetah = append(cheetah, b)
	}
	transportN := []int{1, 16, 64}
	var copies []*bridgeRunner
	for _, tn := range transportN {
		b, err := newBridgeRunner(ctx, bridge.Config{EnvID: "Copy-v0", NumEnvs: tn}, 1, opts)
		if err != nil {
			return err
		}
		defer b.close()
		copies = append(copies, b)
	}

	fmt.Fprintf(stdout, "pcl envbench: %s, N=%d, %d steps per measurement, %d rounds, each contender between two anchor measurements (median over rounds; p25-p75)\n", *envID, *n, *steps, *rounds)
	h := cheetah[0].env.Hello
	fmt.Fprintf(stdout, "context: %d CPUs, GOMAXPROCS=%d, load average %s; server: python %s, gymnasium %s, numpy %s, mujoco %s, pyzmq %s; %s\n\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), loadAvg(), h.Python, h.Gymnasium, h.NumPy, h.MuJoCo, h.PyZMQ, threadEnv())

	// The contenders of the main comparison, each measured against the SyncVectorEnv anchor.
	type contender struct {
		name    string
		measure func() (float64, error)
		sps     []float64 // per round
		ratio   []float64 // per round: sps / the anchor's mean of the measurements on either side
	}
	lockstep := func(b *bridgeRunner) func() (float64, error) {
		return func() (float64, error) { sps, _, err := b.measure(ctx, *steps, 1); return sps, err }
	}
	pipelined := func(b *bridgeRunner, parts int) func() (float64, error) {
		return func() (float64, error) { sps, _, err := b.measure(ctx, *steps, parts); return sps, err }
	}
	anchor := &contender{name: "in-process Gymnasium SyncVectorEnv (anchor)", measure: func() (float64, error) { return vecAnchor.measure(ctx, *steps) }}
	loop := &contender{name: "in-process bare env.step loop", measure: func() (float64, error) { return loopAnchor.measure(ctx, *steps) }}
	cs := []*contender{
		loop,
		{name: "in-process bare loops, 2 processes at once (N/2 each)", measure: func() (float64, error) {
			// As long as the anchor takes for the same number of batches.
			return measurePair(ctx, pair, float64(*steps**n)/anchor.sps[len(anchor.sps)-1])
		}},
		{name: "bridge, 1 server, lockstep", measure: lockstep(cheetah[0])},
		{name: "bridge, 2 servers, lockstep", measure: lockstep(cheetah[1])},
		{name: "bridge, 1 server, pipelined (2 sub-batches)", measure: pipelined(cheetah[0], 2)},
		{name: "bridge, 2 servers, pipelined (2 sub-batches)", measure: pipelined(cheetah[1], 2)},
		{name: "bridge, 2 servers, pipelined (4 sub-batches)", measure: pipelined(cheetah[1], 4)},
	}
	type transportRow struct {
		name     string
		n, parts int
		b        *bridgeRunner
		perBatch []float64 // transport seconds per batch: wall time less env time
		server   []float64 // of which the servers' own work outside env.step
	}
	trs := []*transportRow{
		{name: "N=1, lockstep", n: 1, parts: 1, b: copies[0]},
		{name: "N=16, lockstep", n: 16, parts: 1, b: copies[1]},
		{name: "N=16, pipelined (2 sub-batches)", n: 16, parts: 2, b: copies[1]},
		{name: "N=64, lockstep", n: 64, parts: 1, b: copies[2]},
		{name: "N=64, pipelined (2 sub-batches)", n: 64, parts: 2, b: copies[2]},
	}
	var ping []float64
	// The speed of a process on this kind of machine moves by tens of percent from one second to the
	// next, so every contender is measured between two measurements of the anchor (A c1 A c2 A ... A)
	// and compared with their mean, in many short rounds whose median is reported; the order of the
	// contenders rotates from round to round.
	for r := range *rounds {
		before, err := anchor.measure()
		if err != nil {
			return fmt.Errorf("%s: %w", anchor.name, err)
		}
		anchor.sps = append(anchor.sps, before)
		for j := range cs {
			c := cs[(j+r)%len(cs)]
			sps, err := c.measure()
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			after, err := anchor.measure()
			if err != nil {
				return fmt.Errorf("%s: %w", anchor.name, err)
			}
			anchor.sps = append(anchor.sps, after)
			c.sps = append(c.sps, sps)
			c.ratio = append(c.ratio, sps/((before+after)/2))
			before = after
		}
		p, err := copies[0].ping(ctx, *steps)
		if err != nil {
			return err
		}
		ping = append(ping, p)
		for _, tr := range trs {
			_, t, err := tr.b.measure(ctx, *steps, tr.parts)
			if err != nil {
				return fmt.Errorf("transport %s: %w", tr.name, err)
			}
			tr.perBatch = append(tr.perBatch, t.transport)
			tr.server = append(tr.server, t.serverWork)
		}
	}

	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "measurement\tsteps/s\tvs SyncVectorEnv\tvs bare loop\tp25-p75 (vs SyncVectorEnv)\t")
	fmt.Fprintf(tw, "%s\t%.0f\t1.00\t%.2f\t\t\n", anchor.name, median(anchor.sps), 1/median(loop.ratio))
	for _, c := range cs {
		fmt.Fprintf(tw, "%s\t%.0f\t%.2f\t%.2f\t%s\t\n", c.name, median(c.sps), median(c.ratio), median(perRound(c.ratio, loop.ratio)), spread(c.ratio, "%.2f"))
	}
	fmt.Fprintln(tw, "\t\t\t\t\t")
	if err := tw.Flush(); err != nil { // the next table aligns its own columns
		return err
	}
	fmt.Fprintln(tw, "transport (Copy-v0, env time subtracted)\tus per env-step\tus per batch\tof which server work / round trip\tp25-p75 (us per batch)\t")
	fmt.Fprintf(tw, "ping round trip (floor)\t\t%.1f\t\t%s\t\n", median(ping)*1e6, spread(scale(ping, 1e6), "%.0f"))
	for _, tr := range trs {
		m, sw := median(tr.perBatch), median(tr.server)
		fmt.Fprintf(tw, "%s\t%.2f\t%.1f\t%.0f / %.0f\t%s\t\n", tr.name, m*1e6/float64(tr.n), m*1e6, sw*1e6, (m-sw)*1e6, spread(scale(tr.perBatch, 1e6), "%.0f"))
	}
	fmt.Fprintln(tw, "\t\t\t\t\t")
	if err := tw.Flush(); err != nil {
		return err
	}

	// Copy-v0: Go-native vs Python, N copies of the comparison's size.
	goSps, err := goNativeRate(*n, *steps*10)
	if err != nil {
		return err
	}
	pyIn, err := inProcess(ctx, py, root, "Copy-v0", *n, *steps)
	if err != nil {
		return err
	}
	pb, err := newBridgeRunner(ctx, bridge.Config{EnvID: "Copy-v0", NumEnvs: *n}, 1, opts)
	if err != nil {
		return err
	}
	defer pb.close()
	pyBridge, _, err := pb.measure(ctx, *steps, 1)
	if err != nil {
		return err
	}
	fmt.Fprintln(tw, "Copy-v0 (one round)\tsteps/s\tGo-native / this\t\t\t")
	fmt.Fprintf(tw, "Go-native\t%.0f\t1.0\t\t\t\n", goSps)
	fmt.Fprintf(tw, "Python in-process loop\t%.0f\t%.1f\t\t\t\n", pyIn, goSps/pyIn)
	fmt.Fprintf(tw, "Python via bridge\t%.0f\t%.1f\t\t\t\n", pyBridge, goSps/pyBridge)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nload average after: %s\n", loadAvg())
	return nil
}

// perRound divides xs by base round by round.
func perRound(xs, base []float64) []float64 {
	out := make([]float64, len(xs))
	for i := range xs {
		out[i] = xs[i] / base[i]
	}
	return out
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func scale(xs []float64, f float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * f
	}
	return out
}

// quantile is the q-quantile of xs (linear interpolation between order statistics).
func quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}

// spread formats the middle half of xs: how far single rounds stray from the median.
func spread(xs []float64, format string) string {
	return fmt.Sprintf(format+"-"+format, quantile(xs, 0.25), quantile(xs, 0.75))
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// threadEnv reports the BLAS/OpenMP thread settings the Python processes inherit.
func threadEnv() string {
	var parts []string
	for _, k := range []string{"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"} {
		v := os.Getenv(k)
		if v == "" {
			v = "unset"
		}
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, " ")
}

// anchorProc is `python -m python_server.reference bench-serve`: an in-process anchor (SyncVectorEnv,
// or a bare env.step loop) kept alive so it can be measured in rounds alternating with the bridge.
type anchorProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startAnchor(ctx context.Context, python, root, mode, envID string, n int) (*anchorProc, error) {
	cmd := exec.CommandContext(ctx, python, "-m", "python_server.reference", "bench-serve", "--mode", mode, "--env", envID, "--n", strconv.Itoa(n))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PYTHONPATH="+root)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("in-process anchor: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("in-process anchor: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("in-process anchor of %s: %w", envID, err)
	}
	a := &anchorProc{cmd: cmd, in: in, out: bufio.NewReader(out)}
	var ready struct {
		Ready bool `json:"ready"`
	}
	if err := a.readJSON(&ready); err != nil || !ready.Ready {
		a.close()
		return nil, fmt.Errorf("in-process anchor of %s did not start: %v", envID, err)
	}
	return a, nil
}

func (a *anchorProc) readJSON(v any) error {
	line, err := a.out.ReadString('\n')
	if err != nil {
		return fmt.Errorf("in-process anchor output: %w", err)
	}
	if err := json.Unmarshal([]byte(line), v); err != nil {
		return fmt.Errorf("in-process anchor output %q: %w", line, err)
	}
	return nil
}

// measure runs one measurement of `steps` batched steps; ctx cancellation kills the process.
func (a *anchorProc) measure(ctx context.Context, steps int) (float64, error) {
	return a.request(ctx, strconv.Itoa(steps))
}

// request sends one measurement line (see python_server/reference.py) and returns its steps/s.
func (a *anchorProc) request(ctx context.Context, line string) (float64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if _, err := fmt.Fprintf(a.in, "%s\n", line); err != nil {
		return 0, fmt.Errorf("in-process anchor: %w", err)
	}
	var r struct {
		StepsPerSecond float64 `json:"steps_per_second"`
	}
	if err := a.readJSON(&r); err != nil {
		return 0, err
	}
	return r.StepsPerSecond, nil
}

// measurePair steps both processes at once for the same wall time and returns their summed rate.
func measurePair(ctx context.Context, pair [2]*anchorProc, seconds float64) (float64, error) {
	var sps [2]float64
	var errs [2]error
	var wg sync.WaitGroup
	for k, a := range pair {
		wg.Go(func() { sps[k], errs[k] = a.request(ctx, fmt.Sprintf("for %g", seconds)) })
	}
	wg.Wait()
	return sps[0] + sps[1], errors.Join(errs[:]...)
}

func (a *anchorProc) close() {
	a.in.Close()
	done := make(chan struct{})
	go func() { _ = a.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = a.cmd.Process.Kill()
		<-done
	}
}

// inProcess runs python_server.reference bench once: the same N-copy loop the server runs, without transport.
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

// bridgeRunner is a bridged VecEnv kept open across measurement rounds, with 16 batches of random
// actions drawn up front.
type bridgeRunner struct {
	env     *bridge.VecEnv
	servers int
	acts    []envs.Array
	t       int
}

func newBridgeRunner(ctx context.Context, cfg bridge.Config, servers int, opts bridge.ServerOptions) (*bridgeRunner, error) {
	seeds := make([]int64, cfg.NumEnvs)
	for i := range seeds {
		seeds[i] = int64(i)
	}
	cfg.Seeds = seeds
	e, err := bridge.Start(ctx, cfg, servers, opts)
	if err != nil {
		return nil, err
	}
	b := &bridgeRunner{env: e, servers: servers}
	if _, _, err := e.Reset(ctx, envs.ResetRequest{}); err != nil {
		e.Close()
		return nil, err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b.acts = make([]envs.Array, 16)
	for k := range b.acts {
		b.acts[k] = envs.NewBatch(e.ActionSpace(), cfg.NumEnvs)
		for i := range cfg.NumEnvs {
			if err := envs.WriteRow(e.ActionSpace(), b.acts[k], i, e.ActionSpace().Sample(rng)); err != nil {
				e.Close()
				return nil, err
			}
		}
	}
	return b, nil
}

func (b *bridgeRunner) close() { b.env.Close() }

// measure steps with random actions, keeping `parts` sub-batches in flight (1: lockstep Step; more:
// pipelined, each sub-batch sent again as soon as its results are in, whichever finishes first, so
// no server waits for another and each has its next request early). It returns env-steps/s and the
// transport per batch.
func (b *bridgeRunner) measure(ctx context.Context, steps, parts int) (float64, batchCost, error) {
	n := b.env.NumEnvs()
	if parts < 1 || parts > n {
		return 0, batchCost{}, fmt.Errorf("cannot split %d copies into %d sub-batches", n, parts)
	}
	pending := make([]*bridge.PendingStep, parts)
	sent := make([]int, parts) // batches sent per sub-batch: each uses the action batch of its count
	send := func(j int) (err error) {
		lo, hi := j*n/parts, (j+1)*n/parts
		pending[j], err = b.env.StepAsync(ctx, lo, hi, b.acts[(b.t+sent[j])%len(b.acts)].RowRange(lo, hi))
		sent[j]++
		return err
	}
	defer func() { // leave nothing in flight, even after an error
		for j, p := range pending {
			if p != nil {
				_, _ = p.Wait(ctx)
				pending[j] = nil
			}
		}
		b.t += slices.Max(sent)
	}()
	for j := range parts {
		if err := send(j); err != nil {
			return 0, batchCost{}, err
		}
	}
	warm := max(steps/10, 1) * parts
	var start time.Time
	envSec, serverSec := 0.0, 0.0
	for k := range (steps + max(steps/10, 1)) * parts {
		if k == warm {
			start, envSec, serverSec = time.Now(), 0, 0
		}
		j, _, err := b.env.WaitAny(ctx, pending)
		if j >= 0 {
			pending[j] = nil
		}
		if err != nil {
			return 0, batchCost{}, err
		}
		envSec += b.env.EnvSeconds / float64(b.servers)
		serverSec += b.env.ServerSeconds / float64(b.servers)
		if err := send(j); err != nil {
			return 0, batchCost{}, err
		}
	}
	wall := time.Since(start).Seconds()
	per := float64(steps)
	return float64(steps*n) / wall, batchCost{transport: (wall - envSec) / per, serverWork: (serverSec - envSec) / per}, nil
}

// batchCost is what going through the bridge costs per batch: the wall time less the servers' env
// time (with several servers, their mean), and the part of it that is the servers' own work outside
// env.step (decoding, checks, the per-copy loop); the rest is the round trip.
type batchCost struct{ transport, serverWork float64 }

// ping returns the mean seconds of a ping round trip: the floor under any step's transport.
func (b *bridgeRunner) ping(ctx context.Context, count int) (float64, error) {
	start := time.Now()
	for range count {
		if err := b.env.Ping(ctx); err != nil {
			return 0, err
		}
	}
	return time.Since(start).Seconds() / float64(count) / float64(b.servers), nil
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
	// Batches of `steps` until a quarter of a second has passed: one batch of 64 copies takes about
	// a millisecond, too short for a steady figure.
	start, done := time.Now(), 0
	for done == 0 || time.Since(start) < 250*time.Millisecond {
		for s := range steps {
			if _, err := v.Step(ctx, acts[(done+s)%len(acts)]); err != nil {
				return 0, err
			}
		}
		done += steps
	}
	return float64(done*n) / time.Since(start).Seconds(), nil
}
