package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/internal/lab/sweep"
)

// slurmPackages are Debian's packages the Slurm test installs when a command it needs is missing.
var slurmPackages = []string{"slurm-wlm", "munge", "jq"}

// slurmCommands are the commands the Slurm test runs (jq: the documented sbatch block counts
// runs with it).
var slurmCommands = []string{"munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "scontrol", "sinfo", "jq"}

// TestSlurmSweep runs a tiny sweep as a real Slurm array: it starts munge, slurmctld and slurmd on
// this machine in a temporary directory, submits the sweep with exactly the sbatch block of the
// docs (docs/sweeps.md, or wherever README.md or docs/ show it), cancels one array task after its
// first checkpoints, requeues it, checks that it resumed from its checkpoint, waits for the array
// to finish and reports. Without Slurm (not root, no
// apt-get, daemons that do not start) it is skipped, and under CI=true it fails instead.
func TestSlurmSweep(t *testing.T) {
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("-short: the Slurm test starts daemons and runs an array job")
	}
	ctx, cancel := context.WithTimeout(context.Background(), testBudget(t, 8*time.Minute))
	defer cancel()

	block, doc := docSbatchBlock(t)
	for _, want := range []string{"bin/pcl", "sweeps/fig1"} {
		if !strings.Contains(block, want) {
			t.Fatalf("%s's sbatch block no longer mentions %s; update the test's layout with it:\n%s", doc, want, block)
		}
	}

	cl := startSlurm(ctx, t)

	// The layout the documented commands assume, relative to the directory sbatch is run from (the
	// array's tasks start there too): bin/pcl and sweeps/fig1.
	start := time.Now()
	pcl := filepath.Join(cl.root, "bin", "pcl")
	if out, err := runCmd(ctx, "", nil, "go", "build", "-o", pcl, "."); err != nil {
		t.Fatalf("build pcl: %v\n%s", err, out)
	}
	t.Logf("built pcl in %v", time.Since(start).Round(time.Millisecond))
	const iters = 60
	dir := filepath.Join(cl.root, "sweeps", "fig1")
	if out, err := runPCL(t, append([]string{"sweep", "plan", "--out", dir, "--iters", strconv.Itoa(iters)}, tinySweep...)...); err != nil {
		t.Fatalf("plan: %s", out)
	}
	m, err := sweep.Load(dir)
	if err != nil || len(m.Runs) != 2 {
		t.Fatalf("manifest: %v, %d runs", err, len(m.Runs))
	}

	// Submit with the documented block, as a user would, from the directory holding bin/ and sweeps/.
	start = time.Now()
	out, err := runCmd(ctx, cl.root, cl.env, "bash", "-euo", "pipefail", "-c", block)
	if err != nil {
		t.Fatalf("the sbatch block of %s: %v\n%s", doc, err, out)
	}
	sub := regexp.MustCompile(`Submitted batch job (\d+)`).FindStringSubmatch(out)
	if sub == nil {
		t.Fatalf("sbatch said %q, not the job id", out)
	}
	job := sub[1]
	cl.jobs = append(cl.jobs, job)
	t.Logf("submitted array job %s (%s)", job, strings.TrimSpace(out))

	// Cancel task 1 once it has checkpointed a few iterations, as a preemption would.
	victim := m.Runs[1]
	task := job + "_1"
	rd := sweep.RunDir(dir, victim)
	if err := poll(ctx, 50*time.Millisecond, func() (bool, error) {
		meta, err := runstore.Dir(rd).Meta()
		return err == nil && meta.Iteration >= 3, nil
	}); err != nil {
		t.Fatalf("task %s never checkpointed 3 iterations: %v\n%s", task, err, cl.diagnose(ctx, job))
	}
	if out, err := runCmd(ctx, "", cl.env, "scancel", task); err != nil {
		t.Fatalf("scancel: %v\n%s", err, out)
	}
	if err := poll(ctx, 100*time.Millisecond, func() (bool, error) {
		states, err := cl.states(ctx, job)
		return states["1"] == "CANCELLED", err
	}); err != nil {
		t.Fatalf("task %s not cancelled: %v\n%s", task, err, cl.diagnose(ctx, job))
	}
	meta, err := runstore.Dir(rd).Meta()
	if err != nil {
		t.Fatalf("after scancel: %v", err)
	}
	if meta.Iteration >= iters {
		t.Fatalf("task %s finished all %d iterations before scancel took effect; nothing to resume", task, iters)
	}
	t.Logf("cancelled %s at iteration %d of %d (%v after submission)", task, meta.Iteration, iters, time.Since(start).Round(time.Millisecond))

	// Requeue it. Slurm holds a requeued job until a begin time two minutes on; the test moves
	// that to now, as an administrator can, rather than wait.
	if err := poll(ctx, 200*time.Millisecond, func() (bool, error) {
		_, err := runCmd(ctx, "", cl.env, "scontrol", "requeue", task)
		return err == nil, nil
	}); err != nil {
		t.Fatalf("scontrol requeue %s: %v\n%s", task, err, cl.diagnose(ctx, job))
	}
	if out, err := runCmd(ctx, "", cl.env, "scontrol", "update", "JobId="+task, "StartTime=now"); err != nil {
		t.Fatalf("scontrol update StartTime=now: %v\n%s", err, out)
	}

	var states map[string]string
	if err := poll(ctx, 250*time.Millisecond, func() (bool, error) {
		var err error
		states, err = cl.states(ctx, job)
		if err != nil || len(states) != len(m.Runs) {
			return false, err
		}
		for _, s := range states {
			if !slurmTerminal(s) {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		t.Fatalf("array %s did not finish: %v\n%s", job, err, cl.diagnose(ctx, job))
	}
	for i, s := range states {
		if s != "COMPLETED" {
			t.Errorf("task %s_%s ended %s:\n%s", job, i, s, readTail(filepath.Join(cl.root, "slurm-"+job+"_"+i+".out")))
		}
	}
	t.Logf("array %s finished in %v", job, time.Since(start).Round(time.Millisecond))
	if t.Failed() {
		t.FailNow()
	}

	// The requeued task resumed from the checkpoint it was cancelled at (its output file is
	// rewritten when it is requeued), and its metrics have every iteration once.
	logb, err := os.ReadFile(filepath.Join(cl.root, "slurm-"+task+".out"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(logb)
	res := regexp.MustCompile(`msg=resuming .*iteration=(\d+)`).FindStringSubmatch(log)
	if res == nil || res[1] != strconv.Itoa(meta.Iteration) {
		t.Errorf("requeued task %s: want a resume from iteration %d in its output:\n%s", task, meta.Iteration, log)
	}
	if !strings.Contains(log, "done (found partial)") {
		t.Errorf("requeued task %s: want \"done (found partial)\" in its output:\n%s", task, log)
	}
	if out, err := runCmd(ctx, "", cl.env, "scontrol", "show", "job", task); err != nil || !strings.Contains(out, "Restarts=1") {
		t.Errorf("scontrol show job %s: want Restarts=1: %v\n%s", task, err, out)
	}
	for _, r := range m.Runs {
		rows, err := runstore.ReadMetrics(filepath.Join(sweep.RunDir(dir, r), runstore.MetricsFile))
		if err != nil {
			t.Fatal(err)
		}
		for i, row := range rows {
			if row.Iteration != i {
				t.Fatalf("%s: metrics row %d is iteration %d", r.ID, i, row.Iteration)
			}
		}
		if len(rows) != iters {
			t.Errorf("%s: %d metrics rows, want %d", r.ID, len(rows), iters)
		}
	}
	if out, err := runPCL(t, "sweep", "report", "--dir", dir); err != nil || !strings.Contains(out, "report of 2 finished runs out of 2") {
		t.Errorf("report: %s", out)
	}
}

// testBudget is d, or less when the test binary's -timeout ends sooner (with a minute kept for
// the clean-up).
func testBudget(t *testing.T, d time.Duration) time.Duration {
	if dl, ok := t.Deadline(); ok {
		if left := time.Until(dl) - time.Minute; left < d {
			return max(left, time.Second)
		}
	}
	return d
}

// docFiles are README.md and the Markdown pages under docs/.
func docFiles() []string {
	root := filepath.Join("..", "..")
	files := []string{filepath.Join(root, "README.md")}
	for _, g := range []string{"*.md", "*/*.md"} {
		more, _ := filepath.Glob(filepath.Join(root, "docs", g))
		files = append(files, more...)
	}
	return files
}

// docSbatchBlock returns the shell block of README.md or docs/ that submits a sweep with
// sbatch --array, and the file it is in.
func docSbatchBlock(t *testing.T) (string, string) {
	t.Helper()
	root := filepath.Join("..", "..")
	for _, f := range docFiles() {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, block := range fencedBlocks(string(b), "sh") {
			if strings.Contains(block, "sbatch --array") {
				rel, _ := filepath.Rel(root, f)
				return block, rel
			}
		}
	}
	t.Fatalf("no ```sh block with `sbatch --array` in README.md or docs/")
	return "", ""
}

// fencedBlocks returns the bodies of the ```lang blocks of a Markdown text.
func fencedBlocks(md, lang string) []string {
	var out []string
	var cur *strings.Builder
	sc := bufio.NewScanner(strings.NewReader(md))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```"+lang:
			cur = &strings.Builder{}
		case cur != nil && strings.TrimSpace(line) == "```":
			out = append(out, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	return out
}

// slurmCluster is a single-node Slurm (munged, slurmctld, slurmd) configured in root.
type slurmCluster struct {
	root string
	conf string
	env  []string // the test's environment with SLURM_CONF set
	jobs []string // submitted job ids, cancelled at clean-up
}

// slurmUnavailable skips the test, or fails it under CI=true, where Slurm cannot be had.
func slurmUnavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("Slurm required under CI=true: %s", msg)
	}
	t.Skipf("Slurm cannot be started here: %s", msg)
}

// installSlurm makes sure the commands the test needs are there, installing Debian's packages
// when they are missing, as scripts/setup installs OpenBLAS: as root with apt-get, updating the
// package lists only when the first try fails.
func installSlurm(ctx context.Context, t *testing.T) {
	t.Helper()
	var missing []string
	for _, c := range slurmCommands {
		if _, err := exec.LookPath(c); err != nil {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return
	}
	if runtime.GOOS != "linux" {
		slurmUnavailable(t, "%s missing, and installing them is done only on Debian", strings.Join(missing, ", "))
	}
	if os.Geteuid() != 0 {
		slurmUnavailable(t, "%s missing, and installing them needs root", strings.Join(missing, ", "))
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		slurmUnavailable(t, "%s missing, and there is no apt-get to install them", strings.Join(missing, ", "))
	}
	start := time.Now()
	env := append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	install := append([]string{"install", "-y", "-q", "--no-install-recommends"}, slurmPackages...)
	if _, err := runCmd(ctx, "", env, "apt-get", install...); err != nil {
		if uout, uerr := runCmd(ctx, "", env, "apt-get", "update", "-q"); uerr != nil {
			slurmUnavailable(t, "apt-get update: %v\n%s", uerr, uout)
		}
		if out, err := runCmd(ctx, "", env, "apt-get", install...); err != nil {
			slurmUnavailable(t, "apt-get install %s: %v\n%s", strings.Join(slurmPackages, " "), err, out)
		}
	}
	t.Logf("installed %s with apt-get in %v (for %s)", strings.Join(slurmPackages, " "), time.Since(start).Round(time.Second), strings.Join(missing, ", "))
}

// startSlurm starts munged, slurmctld and slurmd with their configuration, state, spool, logs
// and sockets in a new temporary directory, and waits until the node is idle. Everything is
// stopped and removed when the test ends.
func startSlurm(ctx context.Context, t *testing.T) *slurmCluster {
	t.Helper()
	installSlurm(ctx, t)
	start := time.Now()
	// munged insists that every directory above its socket be searchable by all, which
	// t.TempDir's (0700) is not.
	root, err := os.MkdirTemp("", "pcl-slurm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	for _, d := range []string{"", "state", "spool", "log", "munge", "bin", "sweeps"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cl := &slurmCluster{root: root, conf: filepath.Join(root, "slurm.conf")}
	cl.env = append(os.Environ(), "SLURM_CONF="+cl.conf)

	// A munge key of the test's own, and munged on a socket in root.
	key := make([]byte, 1024)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(root, "munge", "munge.key")
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(root, "munge", "munge.socket")
	cl.daemon(t, "munged", "-F", "--socket="+sock, "--key-file="+keyFile,
		"--pid-file="+filepath.Join(root, "munge", "munged.pid"), "--log-file="+filepath.Join(root, "log", "munged.log"),
		"--seed-file="+filepath.Join(root, "munge", "munged.seed"))
	if err := poll(ctx, 20*time.Millisecond, func() (bool, error) {
		_, err := os.Stat(sock)
		return err == nil, nil
	}); err != nil {
		slurmUnavailable(t, "munged made no socket: %v\n%s", err, readTail(filepath.Join(root, "log", "munged.out")))
	}

	// This node as slurmd sees it (its first line: NodeName=... CPUs=... RealMemory=...).
	out, err := runCmd(ctx, "", nil, "slurmd", "-C")
	if err != nil {
		slurmUnavailable(t, "slurmd -C: %v\n%s", err, out)
	}
	node, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	name := regexp.MustCompile(`^NodeName=(\S+)`).FindStringSubmatch(node)
	if name == nil {
		slurmUnavailable(t, "slurmd -C printed no NodeName: %q", out)
	}
	ports, err := freePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	p := func(f string) string { return filepath.Join(root, f) }
	conf := strings.Join([]string{
		"# A single-node Slurm for sparsepcl's test (cmd/pcl/slurm_test.go).",
		"ClusterName=pcltest",
		fmt.Sprintf("SlurmctldHost=%s(127.0.0.1)", name[1]),
		fmt.Sprintf("SlurmctldPort=%d", ports[0]),
		fmt.Sprintf("SlurmdPort=%d", ports[1]),
		"SlurmUser=root",
		"SlurmdUser=root",
		"AuthType=auth/munge",
		"CredType=cred/munge",
		"AuthInfo=socket=" + sock,
		"StateSaveLocation=" + p("state"),
		"SlurmdSpoolDir=" + p("spool"),
		"SlurmctldPidFile=" + p("slurmctld.pid"),
		"SlurmdPidFile=" + p("slurmd.pid"),
		"SlurmctldLogFile=" + p("log/slurmctld.log"),
		"SlurmdLogFile=" + p("log/slurmd.log"),
		"PlugStackConfig=" + p("plugstack.conf"),
		"ProctrackType=proctrack/linuxproc",
		"TaskPlugin=task/none",
		"SwitchType=switch/none",
		"MpiDefault=none",
		"JobAcctGatherType=jobacct_gather/none",
		"AccountingStorageType=accounting_storage/none",
		"JobCompType=jobcomp/none",
		"SelectType=select/cons_tres",
		"SelectTypeParameters=CR_CPU",
		"SchedulerType=sched/backfill",
		"ReturnToService=2",
		"KillWait=5",
		"MinJobAge=3600",
		node + " NodeAddr=127.0.0.1 State=UNKNOWN",
		"PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
	}, "\n") + "\n"
	if err := os.WriteFile(cl.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("plugstack.conf"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cl.daemon(t, "slurmctld", "-D", "-c", "-f", cl.conf)
	cl.daemon(t, "slurmd", "-D", "-f", cl.conf, "-N", name[1])
	var state string
	if err := poll(ctx, 100*time.Millisecond, func() (bool, error) {
		out, err := runCmd(ctx, "", cl.env, "sinfo", "-h", "-N", "-o", "%t")
		state = strings.TrimSpace(out)
		return err == nil && state == "idle", nil
	}); err != nil {
		slurmUnavailable(t, "node not idle (sinfo: %q): %v\nslurmctld: %s\nslurmd: %s", state, err,
			readTail(p("log/slurmctld.log")), readTail(p("log/slurmd.log")))
	}
	t.Logf("Slurm up in %v: %s", time.Since(start).Round(time.Millisecond), node)
	t.Cleanup(func() {
		// Jobs outlive slurmd (their slurmstepd goes on): cancel them first.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, j := range cl.jobs {
			_, _ = runCmd(ctx, "", cl.env, "scancel", j)
		}
		_ = poll(ctx, 100*time.Millisecond, func() (bool, error) {
			out, err := runCmd(ctx, "", cl.env, "squeue", "-h")
			return err == nil && strings.TrimSpace(out) == "", nil
		})
		if t.Failed() {
			for _, f := range []string{"slurmctld.log", "slurmd.log", "munged.log"} {
				t.Logf("%s:\n%s", f, readTail(p("log/"+f)))
			}
		}
	})
	return cl
}

// daemon starts a daemon in the foreground, its output in root/log/<name>.out, and stops it
// (SIGTERM, then SIGKILL after 10 s) when the test ends.
func (cl *slurmCluster) daemon(t *testing.T, name string, args ...string) {
	t.Helper()
	logf, err := os.Create(filepath.Join(cl.root, "log", name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Env = cl.env
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		slurmUnavailable(t, "start %s: %v", name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		defer logf.Close()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
}

// states returns the state of each task of array job, by task id (squeue keeps finished jobs
// for MinJobAge).
func (cl *slurmCluster) states(ctx context.Context, job string) (map[string]string, error) {
	out, err := runCmd(ctx, "", cl.env, "squeue", "-h", "-r", "--states=all", "-j", job, "-o", "%K %T")
	if err != nil {
		return nil, err
	}
	states := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			states[f[0]] = f[1]
		}
	}
	return states, nil
}

// diagnose is what a failure shows: the queue, the node, and the tails of the tasks' output.
func (cl *slurmCluster) diagnose(ctx context.Context, job string) string {
	var b strings.Builder
	for _, args := range [][]string{{"squeue", "-r", "--states=all", "-o", "%i %T %r %S"}, {"sinfo", "-N", "-l"}} {
		out, err := runCmd(ctx, "", cl.env, args[0], args[1:]...)
		fmt.Fprintf(&b, "$ %s (%v)\n%s\n", strings.Join(args, " "), err, out)
	}
	outs, _ := filepath.Glob(filepath.Join(cl.root, "slurm-"+job+"_*.out"))
	for _, f := range outs {
		fmt.Fprintf(&b, "%s:\n%s\n", filepath.Base(f), readTail(f))
	}
	return b.String()
}

// slurmTerminal says whether a job state is final (COMPLETING is not: the job's processes are
// still being ended).
func slurmTerminal(s string) bool {
	switch s {
	case "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL", "DEADLINE":
		return true
	}
	return false
}

// runCmd runs a command in dir (the current one when "") with env (the test's when nil), its
// stdout and stderr together, ended when ctx is.
func runCmd(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return out.String(), nil
}

// poll calls cond every interval until it returns true, an error, or ctx ends.
func poll(ctx context.Context, interval time.Duration, cond func() (bool, error)) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("gave up waiting: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// freePorts returns n TCP ports that were free on 127.0.0.1 a moment ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// readTail returns the last 4 KB of a file, or why it cannot be read.
func readTail(path string) string {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "(" + filepath.Base(path) + " does not exist)"
	} else if err != nil {
		return "(" + err.Error() + ")"
	}
	if len(b) > 4096 {
		b = b[len(b)-4096:]
	}
	return string(b)
}
