// Package envbench measures env stepping side by side in one run: in-process Gymnasium against
// the bridge with one and two servers (stepped in lockstep, and pipelined), the bridge's transport
// cost per env-step against a ping round trip, and Go-native against Python-served algorithmic
// envs (`pcl envbench`).
//
// Fairness: every contender is set up once (the anchors are long-lived Python processes, the
// bridges keep their servers), then measured in many short rounds, each contender right after and
// right before a measurement of the SyncVectorEnv anchor, so a drift of the machine's speed hits
// both sides of each ratio alike; the tables show medians over the rounds (ratios: median of the
// per-round ratios) and the middle half of the rounds.
package envbench

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"

	"github.com/sparsepcl/sparsepcl/bridge"
)

// Options say what to measure.
type Options struct {
	Env    string // Gymnasium env of the in-process vs bridge comparison
	N      int    // copies per batch of that comparison
	Steps  int    // batched steps per measurement
	Rounds int    // measurement rounds (medians are reported)
	Python string // interpreter of the anchors and servers
	Root   string // the repository root (python_server lives there)
}

// Check says what is wrong with o's sizes, if anything.
func (o Options) Check() error {
	if o.N < 4 || o.Steps < 10 || o.Rounds < 1 {
		return fmt.Errorf("need -n >= 4 (two sub-batches per server), -steps >= 10 and -rounds >= 1")
	}
	return nil
}

// Run sets up every contender, measures them in o.Rounds rounds and writes the tables to stdout.
func Run(ctx context.Context, o Options, stdout io.Writer) error {
	if err := o.Check(); err != nil {
		return err
	}
	py, root := o.Python, o.Root
	opts := bridge.ServerOptions{Python: py, Root: root}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Set everything up first.
	vecAnchor, err := startAnchor(ctx, py, root, "vector", o.Env, o.N)
	if err != nil {
		return err
	}
	defer vecAnchor.close()
	loopAnchor, err := startAnchor(ctx, py, root, "loop", o.Env, o.N)
	if err != nil {
		return err
	}
	defer loopAnchor.close()
	// Two bare loops of half the copies each, run at once: what two processes get out of the two
	// cores at all, the ceiling of the two-server rows.
	var pair [2]*anchorProc
	for k := range pair {
		if pair[k], err = startAnchor(ctx, py, root, "loop", o.Env, max(o.N/2, 1)); err != nil {
			return err
		}
		defer pair[k].close()
	}
	var cheetah []*bridgeRunner
	for _, servers := range []int{1, 2} {
		b, err := newBridgeRunner(ctx, bridge.Config{EnvID: o.Env, NumEnvs: o.N}, servers, opts)
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

	fmt.Fprintf(stdout, "pcl envbench: %s, N=%d, %d steps per measurement, %d rounds, each contender between two anchor measurements (median over rounds; p25-p75)\n", o.Env, o.N, o.Steps, o.Rounds)
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
		return func() (float64, error) { sps, _, err := b.measure(ctx, o.Steps, 1); return sps, err }
	}
	pipelined := func(b *bridgeRunner, parts int) func() (float64, error) {
		return func() (float64, error) { sps, _, err := b.measure(ctx, o.Steps, parts); return sps, err }
	}
	anchor := &contender{name: "in-process Gymnasium SyncVectorEnv (anchor)", measure: func() (float64, error) { return vecAnchor.measure(ctx, o.Steps) }}
	loop := &contender{name: "in-process bare env.step loop", measure: func() (float64, error) { return loopAnchor.measure(ctx, o.Steps) }}
	cs := []*contender{
		loop,
		{name: "in-process bare loops, 2 processes at once (N/2 each)", measure: func() (float64, error) {
			// As long as the anchor takes for the same number of batches.
			return measurePair(ctx, pair, float64(o.Steps*o.N)/anchor.sps[len(anchor.sps)-1])
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
	for r := range o.Rounds {
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
		p, err := copies[0].ping(ctx, o.Steps)
		if err != nil {
			return err
		}
		ping = append(ping, p)
		for _, tr := range trs {
			_, t, err := tr.b.measure(ctx, o.Steps, tr.parts)
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
	goSps, err := goNativeRate(o.N, o.Steps*10)
	if err != nil {
		return err
	}
	pyIn, err := inProcess(ctx, py, root, "Copy-v0", o.N, o.Steps)
	if err != nil {
		return err
	}
	pb, err := newBridgeRunner(ctx, bridge.Config{EnvID: "Copy-v0", NumEnvs: o.N}, 1, opts)
	if err != nil {
		return err
	}
	defer pb.close()
	pyBridge, _, err := pb.measure(ctx, o.Steps, 1)
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
