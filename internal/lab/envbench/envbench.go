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
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b := &bench{o: o, ctx: ctx, opts: bridge.ServerOptions{Python: o.Python, Root: o.Root}}
	defer b.close()
	if err := b.setUp(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "pcl envbench: %s, N=%d, %d steps per measurement, %d rounds, each contender between two anchor measurements (median over rounds; p25-p75)\n", o.Env, o.N, o.Steps, o.Rounds)
	h := b.cheetah[0].env.Hello
	fmt.Fprintf(stdout, "context: %d CPUs, GOMAXPROCS=%d, load average %s; server: python %s, gymnasium %s, numpy %s, mujoco %s, pyzmq %s; %s\n\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), loadAvg(), h.Python, h.Gymnasium, h.NumPy, h.MuJoCo, h.PyZMQ, threadEnv())
	anchor, loop, cs := b.contenders()
	trs := b.transportRows()
	ping, err := b.rounds(anchor, cs, trs)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	if err := printComparison(tw, anchor, loop, cs); err != nil {
		return err
	}
	if err := printTransport(tw, ping, trs); err != nil {
		return err
	}
	if err := b.copyComparison(tw); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nload average after: %s\n", loadAvg())
	return nil
}

// bench is one envbench run's contenders, set up before any is measured and closed together.
type bench struct {
	o    Options
	ctx  context.Context
	opts bridge.ServerOptions

	vecAnchor, loopAnchor *anchorProc
	// pair is two bare loops of half the copies each, run at once: what two processes get out
	// of the two cores at all, the ceiling of the two-server rows.
	pair    [2]*anchorProc
	cheetah []*bridgeRunner // o.Env over 1 and 2 servers
	copies  []*bridgeRunner // Copy-v0 at the transport rows' sizes
	closers []func()
}

// transportN are the copy counts of the transport rows.
var transportN = []int{1, 16, 64}

func (b *bench) anchor(mode string, n int) (*anchorProc, error) {
	a, err := startAnchor(b.ctx, b.o.Python, b.o.Root, mode, b.o.Env, n)
	if err == nil {
		b.closers = append(b.closers, a.close)
	}
	return a, err
}

func (b *bench) runner(cfg bridge.Config, servers int) (*bridgeRunner, error) {
	r, err := newBridgeRunner(b.ctx, cfg, servers, b.opts)
	if err == nil {
		b.closers = append(b.closers, r.close)
	}
	return r, err
}

// setUp starts every anchor process and bridge.
func (b *bench) setUp() error {
	var err error
	if b.vecAnchor, err = b.anchor("vector", b.o.N); err != nil {
		return err
	}
	if b.loopAnchor, err = b.anchor("loop", b.o.N); err != nil {
		return err
	}
	for k := range b.pair {
		if b.pair[k], err = b.anchor("loop", max(b.o.N/2, 1)); err != nil {
			return err
		}
	}
	for _, servers := range []int{1, 2} {
		r, err := b.runner(bridge.Config{EnvID: b.o.Env, NumEnvs: b.o.N}, servers)
		if err != nil {
			return err
		}
		b.cheetah = append(b.cheetah, r)
	}
	for _, tn := range transportN {
		r, err := b.runner(bridge.Config{EnvID: "Copy-v0", NumEnvs: tn}, 1)
		if err != nil {
			return err
		}
		b.copies = append(b.copies, r)
	}
	return nil
}

// close releases everything setUp started, last first.
func (b *bench) close() {
	for i := len(b.closers) - 1; i >= 0; i-- {
		b.closers[i]()
	}
}

// contender is one row of the main comparison, measured against the SyncVectorEnv anchor.
type contender struct {
	name    string
	measure func() (float64, error)
	sps     []float64 // per round
	ratio   []float64 // per round: sps / the anchor's mean of the measurements on either side
}

// contenders are the anchor, the bare loop and every row of the main comparison (the loop
// among them).
func (b *bench) contenders() (anchor, loop *contender, cs []*contender) {
	ctx, o := b.ctx, b.o
	lockstep := func(r *bridgeRunner) func() (float64, error) {
		return func() (float64, error) { sps, _, err := r.measure(ctx, o.Steps, 1); return sps, err }
	}
	pipelined := func(r *bridgeRunner, parts int) func() (float64, error) {
		return func() (float64, error) { sps, _, err := r.measure(ctx, o.Steps, parts); return sps, err }
	}
	anchor = &contender{name: "in-process Gymnasium SyncVectorEnv (anchor)", measure: func() (float64, error) { return b.vecAnchor.measure(ctx, o.Steps) }}
	loop = &contender{name: "in-process bare env.step loop", measure: func() (float64, error) { return b.loopAnchor.measure(ctx, o.Steps) }}
	cs = []*contender{
		loop,
		{name: "in-process bare loops, 2 processes at once (N/2 each)", measure: func() (float64, error) {
			// As long as the anchor takes for the same number of batches.
			return measurePair(ctx, b.pair, float64(o.Steps*o.N)/anchor.sps[len(anchor.sps)-1])
		}},
		{name: "bridge, 1 server, lockstep", measure: lockstep(b.cheetah[0])},
		{name: "bridge, 2 servers, lockstep", measure: lockstep(b.cheetah[1])},
		{name: "bridge, 1 server, pipelined (2 sub-batches)", measure: pipelined(b.cheetah[0], 2)},
		{name: "bridge, 2 servers, pipelined (2 sub-batches)", measure: pipelined(b.cheetah[1], 2)},
		{name: "bridge, 2 servers, pipelined (4 sub-batches)", measure: pipelined(b.cheetah[1], 4)},
	}
	return anchor, loop, cs
}

// transportRow is one row of the transport table (Copy-v0, env time subtracted).
type transportRow struct {
	name     string
	n, parts int
	b        *bridgeRunner
	perBatch []float64 // transport seconds per batch: wall time less env time
	server   []float64 // of which the servers' own work outside env.step
}

func (b *bench) transportRows() []*transportRow {
	return []*transportRow{
		{name: "N=1, lockstep", n: 1, parts: 1, b: b.copies[0]},
		{name: "N=16, lockstep", n: 16, parts: 1, b: b.copies[1]},
		{name: "N=16, pipelined (2 sub-batches)", n: 16, parts: 2, b: b.copies[1]},
		{name: "N=64, lockstep", n: 64, parts: 1, b: b.copies[2]},
		{name: "N=64, pipelined (2 sub-batches)", n: 64, parts: 2, b: b.copies[2]},
	}
}

// rounds measures o.Rounds rounds and returns the ping round trips. The speed of a process on
// this kind of machine moves by tens of percent from one second to the next, so every contender
// is measured between two measurements of the anchor (A c1 A c2 A ... A) and compared with their
// mean, in many short rounds whose median is reported; the order of the contenders rotates from
// round to round.
func (b *bench) rounds(anchor *contender, cs []*contender, trs []*transportRow) ([]float64, error) {
	var ping []float64
	for r := range b.o.Rounds {
		before, err := anchor.measure()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", anchor.name, err)
		}
		anchor.sps = append(anchor.sps, before)
		for j := range cs {
			c := cs[(j+r)%len(cs)]
			sps, err := c.measure()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.name, err)
			}
			after, err := anchor.measure()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", anchor.name, err)
			}
			anchor.sps = append(anchor.sps, after)
			c.sps = append(c.sps, sps)
			c.ratio = append(c.ratio, sps/((before+after)/2))
			before = after
		}
		p, err := b.copies[0].ping(b.ctx, b.o.Steps)
		if err != nil {
			return nil, err
		}
		ping = append(ping, p)
		for _, tr := range trs {
			_, t, err := tr.b.measure(b.ctx, b.o.Steps, tr.parts)
			if err != nil {
				return nil, fmt.Errorf("transport %s: %w", tr.name, err)
			}
			tr.perBatch = append(tr.perBatch, t.transport)
			tr.server = append(tr.server, t.serverWork)
		}
	}
	return ping, nil
}

// printComparison writes the main table.
func printComparison(tw *tabwriter.Writer, anchor, loop *contender, cs []*contender) error {
	fmt.Fprintln(tw, "measurement\tsteps/s\tvs SyncVectorEnv\tvs bare loop\tp25-p75 (vs SyncVectorEnv)\t")
	fmt.Fprintf(tw, "%s\t%.0f\t1.00\t%.2f\t\t\n", anchor.name, median(anchor.sps), 1/median(loop.ratio))
	for _, c := range cs {
		fmt.Fprintf(tw, "%s\t%.0f\t%.2f\t%.2f\t%s\t\n", c.name, median(c.sps), median(c.ratio), median(perRound(c.ratio, loop.ratio)), spread(c.ratio, "%.2f"))
	}
	fmt.Fprintln(tw, "\t\t\t\t\t")
	return tw.Flush() // the next table aligns its own columns
}

// printTransport writes the transport table.
func printTransport(tw *tabwriter.Writer, ping []float64, trs []*transportRow) error {
	fmt.Fprintln(tw, "transport (Copy-v0, env time subtracted)\tus per env-step\tus per batch\tof which server work / round trip\tp25-p75 (us per batch)\t")
	fmt.Fprintf(tw, "ping round trip (floor)\t\t%.1f\t\t%s\t\n", median(ping)*1e6, spread(scale(ping, 1e6), "%.0f"))
	for _, tr := range trs {
		m, sw := median(tr.perBatch), median(tr.server)
		fmt.Fprintf(tw, "%s\t%.2f\t%.1f\t%.0f / %.0f\t%s\t\n", tr.name, m*1e6/float64(tr.n), m*1e6, sw*1e6, (m-sw)*1e6, spread(scale(tr.perBatch, 1e6), "%.0f"))
	}
	fmt.Fprintln(tw, "\t\t\t\t\t")
	return tw.Flush()
}

// copyComparison measures and writes Copy-v0 Go-native against Python, N copies of the main
// comparison's size, one round.
func (b *bench) copyComparison(tw *tabwriter.Writer) error {
	o := b.o
	goSps, err := goNativeRate(o.N, o.Steps*10)
	if err != nil {
		return err
	}
	pyIn, err := inProcess(b.ctx, o.Python, o.Root, "Copy-v0", o.N, o.Steps)
	if err != nil {
		return err
	}
	pb, err := b.runner(bridge.Config{EnvID: "Copy-v0", NumEnvs: o.N}, 1)
	if err != nil {
		return err
	}
	pyBridge, _, err := pb.measure(b.ctx, o.Steps, 1)
	if err != nil {
		return err
	}
	fmt.Fprintln(tw, "Copy-v0 (one round)\tsteps/s\tGo-native / this\t\t\t")
	fmt.Fprintf(tw, "Go-native\t%.0f\t1.0\t\t\t\n", goSps)
	fmt.Fprintf(tw, "Python in-process loop\t%.0f\t%.1f\t\t\t\n", pyIn, goSps/pyIn)
	fmt.Fprintf(tw, "Python via bridge\t%.0f\t%.1f\t\t\t\n", pyBridge, goSps/pyBridge)
	return tw.Flush()
}
