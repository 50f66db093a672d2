package envbench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"text/tabwriter"

	"github.com/sparsepcl/sparsepcl/bridge"
	"github.com/sparsepcl/sparsepcl/bridge/auth"
)

// RunAuth measures what ZeroMQ PLAIN authentication costs the bridge (`pcl envbench --auth`):
// o.Env with o.N copies on one server over tcp loopback that requires credentials, against one
// that does not, both set up first, then measured alternately (NULL PLAIN NULL ... NULL) in
// o.Rounds rounds, lockstep and pipelined; each PLAIN measurement is divided by the mean of the
// NULL ones on either side, so a drift of the machine's speed hits both sides of the ratio alike.
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
	cfg := bridge.Config{EnvID: o.Env, NumEnvs: o.N}
	null, err := newBridgeRunner(ctx, cfg, 1, base)
	if err != nil {
		return fmt.Errorf("envbench: NULL server: %w", err)
	}
	defer null.close()
	withAuth := base
	withAuth.AuthFile = file
	plain, err := newBridgeRunner(ctx, cfg, 1, withAuth)
	if err != nil {
		return fmt.Errorf("envbench: PLAIN server: %w", err)
	}
	defer plain.close()
	fmt.Fprintf(stdout, "pcl envbench --auth: %s, N=%d, one server on tcp loopback each, %d steps per measurement, %d rounds, "+
		"PLAIN between two NULL measurements (median over rounds; p25-p75)\n", o.Env, o.N, o.Steps, o.Rounds)
	h := plain.env.Hello
	fmt.Fprintf(stdout, "context: %d CPUs, GOMAXPROCS=%d, load average %s; server: python %s, gymnasium %s, mujoco %s, pyzmq %s; %s\n\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), loadAvg(), h.Python, h.Gymnasium, h.MuJoCo, h.PyZMQ, threadEnv())
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "measurement\tNULL steps/s\tPLAIN steps/s\tPLAIN / NULL\tp25-p75\t")
	for _, parts := range []int{1, 2} {
		var nulls, plains, ratios []float64
		for range o.Rounds {
			before, _, err := null.measure(ctx, o.Steps, parts)
			if err != nil {
				return fmt.Errorf("envbench: NULL: %w", err)
			}
			p, _, err := plain.measure(ctx, o.Steps, parts)
			if err != nil {
				return fmt.Errorf("envbench: PLAIN: %w", err)
			}
			after, _, err := null.measure(ctx, o.Steps, parts)
			if err != nil {
				return fmt.Errorf("envbench: NULL: %w", err)
			}
			nulls = append(nulls, before, after)
			plains = append(plains, p)
			ratios = append(ratios, p/((before+after)/2))
		}
		name := "lockstep"
		if parts > 1 {
			name = fmt.Sprintf("pipelined (%d sub-batches)", parts)
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.3f\t%s\t\n", name, median(nulls), median(plains), median(ratios), spread(ratios, "%.3f"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nload average after: %s\n", loadAvg())
	return nil
}
