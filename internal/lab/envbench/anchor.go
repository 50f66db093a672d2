package envbench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

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
