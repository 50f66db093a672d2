package envbench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/sparsepcl/sparsepcl/bridge"
	"github.com/sparsepcl/sparsepcl/bridge/auth"
)

// RunAuth measures what ZeroMQ PLAIN authentication costs the bridge (`pcl envbench --auth`):
// o.Env with o.N copies on one server over tcp loopback that requires credentials, against one
// that does not, and, as a control, against a second one that does not (two servers alike differ by
// chance alone: the control's ratio shows how far). All three are set up first. On a shared
// machine the speed moves by tens of percent from one second to the next, so they are interleaved
// batch by batch (lockstep steps, the order rotated at every batch): a drift slower than a batch
// hits all alike. Each round of o.Steps batches on each gives a ratio of speeds; the table shows the
// median over o.Rounds rounds, the ratio of all rounds pooled, and the ratio of the median batch
// times (robust to the batches a busy machine stalls, which dominate the others).
func RunAuth(ctx context.Context, o Options, stdout io.Writer) error {
	if err := o.Check(); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "sparsepcl-envbench-auth-")
	if err != nil {
		return fmt.Errorf("envbench: %w", err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "auth.json")
	if _, err := auth.New(file); err != nil {
		return fmt.Errorf("envbench: %w", err)
	}
	base := bridge.ServerOptions{Python: o.Python, Root: o.Root, Bind: "tcp://127.0.0.1:0"}
	withAuth := base
	withAuth.AuthFile = file
	cfg := bridge.Config{EnvID: o.Env, NumEnvs: o.N}
	names := []string{"NULL", "PLAIN", "NULL, a second server (control)"}
	runners := make([]*bridgeRunner, len(names))
	for i, opts := range []bridge.ServerOptions{base, withAuth, base} {
		r, err := newBridgeRunner(ctx, cfg, 1, opts)
		if err != nil {
			return fmt.Errorf("envbench: %s server: %w", names[i], err)
		}
		defer r.close()
		runners[i] = r
	}
	fmt.Fprintf(stdout, "pcl envbench --auth: %s, N=%d, one server on tcp loopback each, lockstep, interleaved batch by batch, "+
		"%d batches each per round, %d rounds (median over rounds; p25-p75)\n", o.Env, o.N, o.Steps, o.Rounds)
	h := runners[1].env.Hello
	fmt.Fprintf(stdout, "context: %d CPUs, GOMAXPROCS=%d, load average %s; server: python %s, gymnasium %s, mujoco %s, pyzmq %s; %s\n\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), loadAvg(), h.Python, h.Gymnasium, h.MuJoCo, h.PyZMQ, threadEnv())
	for _, r := range runners { // warm up
		if _, err := r.steps(ctx, max(o.Steps/10, 1)); err != nil {
			return err
		}
	}
	sps := make([][]float64, len(runners))
	ratios := make([][]float64, len(runners)) // per round, against the first NULL server
	pooled := make([]time.Duration, len(runners))
	batches := make([][]float64, len(runners)) // every batch's seconds: their median shrugs off the batches a busy machine stalled
	for range o.Rounds {
		times := make([]time.Duration, len(runners))
		for k := range o.Steps {
			for j := range runners {
				i := (j + k) % len(runners)
				d, err := runners[i].steps(ctx, 1)
				if err != nil {
					return fmt.Errorf("envbench: %s: %w", names[i], err)
				}
				times[i] += d
				batches[i] = append(batches[i], d.Seconds())
			}
		}
		for i, d := range times {
			sps[i] = append(sps[i], float64(o.Steps*o.N)/d.Seconds())
			ratios[i] = append(ratios[i], times[0].Seconds()/d.Seconds())
			pooled[i] += d
		}
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "server\tsteps/s\tvs NULL\tp25-p75\tall rounds pooled\tmedian batch\t")
	for i, name := range names {
		fmt.Fprintf(tw, "%s\t%.0f\t%.3f\t%s\t%.3f\t%.3f\t\n", name, median(sps[i]), median(ratios[i]), spread(ratios[i], "%.3f"),
			pooled[0].Seconds()/pooled[i].Seconds(), median(batches[0])/median(batches[i]))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nload average after: %s\n", loadAvg())
	return nil
}

// steps steps the runner k lockstep batches with its random actions and returns the wall time.
func (b *bridgeRunner) steps(ctx context.Context, k int) (time.Duration, error) {
	start := time.Now()
	for range k {
		if _, err := b.env.Step(ctx, b.acts[b.t%len(b.acts)]); err != nil {
			return 0, fmt.Errorf("envbench: step: %w", err)
		}
		b.t++
	}
	return time.Since(start), nil
}
