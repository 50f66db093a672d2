package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/bridge/auth"
)

// TestSlurmLaunch runs the job `pcl launch slurm` writes on a real single-node Slurm (see
// startSlurm): an env server as one job step on tcp with credentials, the learner as another,
// training CartPole through it; then a second job whose server step is killed under the learner,
// which must stop the learner (with its checkpoint) and fail the job, saying why. Without Slurm it
// is skipped, and under CI=true it fails instead.
func TestSlurmLaunch(t *testing.T) {
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("-short: the Slurm test starts daemons and runs jobs")
	}
	needServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), testBudget(t, 8*time.Minute))
	defer cancel()
	cl := startSlurm(ctx, t)
	pcl := filepath.Join(cl.root, "bin", "pcl")
	if out, err := runCmd(ctx, "", nil, "go", "build", "-o", pcl, "."); err != nil {
		t.Fatalf("build pcl: %v\n%s", err, out)
	}
	file := filepath.Join(cl.root, "run.auth")
	creds, err := auth.New(file)
	if err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(cl.root, "logs")

	// submit writes the job for these train flags, submits it from cl.root and returns its id.
	submit := func(name string, train ...string) string {
		script := filepath.Join(cl.root, name+".sh")
		args := append([]string{"launch", "slurm", "--name", name, "--auth-file", file, "--pcl", pcl, "--logs", logs, "--out", script, "--"}, train...)
		if out, err := runPCL(t, args...); err != nil {
			t.Fatalf("pcl launch slurm: %s", out)
		}
		out, err := runCmd(ctx, cl.root, cl.env, "sbatch", script)
		if err != nil {
			t.Fatalf("sbatch: %v\n%s", err, out)
		}
		sub := regexp.MustCompile(`Submitted batch job (\d+)`).FindStringSubmatch(out)
		if sub == nil {
			t.Fatalf("sbatch said %q, not the job id", out)
		}
		cl.jobs = append(cl.jobs, sub[1])
		return sub[1]
	}
	state := func(job string) string {
		out, _ := runCmd(ctx, "", cl.env, "squeue", "-h", "--states=all", "-j", job, "-o", "%T")
		return strings.TrimSpace(out)
	}
	finish := func(job string) string {
		var s string
		if err := poll(ctx, 250*time.Millisecond, func() (bool, error) { s = state(job); return slurmTerminal(s), nil }); err != nil {
			t.Fatalf("job %s did not finish (%s): %v\n%s\n%s", job, s, err, readTail(filepath.Join(cl.root, "slurm-"+job+".out")), cl.diagnose(ctx, job))
		}
		return s
	}

	// A job that trains.
	run := filepath.Join(cl.root, "runs", "cartpole")
	const iters = 5
	job := submit("pcl-cartpole", "--env", "CartPole-v1", "--iters", "5", "--eval-every", "1", "--out", run)
	out := filepath.Join(cl.root, "slurm-"+job+".out")
	if s := finish(job); s != "COMPLETED" {
		t.Fatalf("job %s ended %s:\n%s\nserver: %s", job, s, readTail(out), readTail(filepath.Join(logs, "server-"+job+"-0.err")))
	}
	log := readTail(out)
	t.Logf("job %s (trains):\n%s", job, log)
	for _, want := range []*regexp.Regexp{regexp.MustCompile(`pcl launch: env server 0: tcp://\S+:\d+`), regexp.MustCompile(`learner finished \(exit 0\)`)} {
		if !want.MatchString(log) {
			t.Errorf("the job's output lacks %s:\n%s", want, log)
		}
	}
	server := readTail(filepath.Join(logs, "server-"+job+"-0.out"))
	if !regexp.MustCompile(`(?m)^node \S+\n\{"ready": true.*"endpoint": "tcp://0\.0\.0\.0:\d+".*"auth": "PLAIN"`).MatchString(server) {
		t.Errorf("the server step's output is not a PLAIN server's ready line on tcp:\n%s", server)
	}
	for _, f := range []string{"checkpoint.bin", "config.json", "run.json", runstore.MetricsFile} {
		if _, err := os.Stat(filepath.Join(run, f)); err != nil {
			t.Errorf("run directory lacks %s: %v", f, err)
		}
	}
	rows, err := runstore.ReadMetrics(filepath.Join(run, runstore.MetricsFile))
	if err != nil || len(rows) != iters {
		t.Errorf("metrics: %d rows (%v), want %d", len(rows), err, iters)
	}
	for _, f := range []string{out, filepath.Join(logs, "server-"+job+"-0.out"), filepath.Join(logs, "server-"+job+"-0.err"), filepath.Join(cl.root, "pcl-cartpole.sh")} {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), creds.Password) {
			t.Errorf("%s shows the password", f)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// A job whose server step dies under the learner.
	run = filepath.Join(cl.root, "runs", "long")
	job = submit("pcl-dies", "--env", "CartPole-v1", "--iters", "100000", "--eval-every", "0", "--checkpoint-every", "1", "--out", run)
	out = filepath.Join(cl.root, "slurm-"+job+".out")
	if err := poll(ctx, 100*time.Millisecond, func() (bool, error) {
		meta, err := runstore.Dir(run).Meta()
		return err == nil && meta.Iteration >= 2, nil
	}); err != nil {
		t.Fatalf("the learner never checkpointed 2 iterations: %v\n%s", err, readTail(out))
	}
	if o, err := runCmd(ctx, "", cl.env, "scancel", "--signal=KILL", job+".0"); err != nil {
		t.Fatalf("scancel the server step: %v\n%s", err, o)
	}
	start := time.Now()
	if s := finish(job); s != "FAILED" {
		t.Errorf("job %s ended %s, want FAILED:\n%s", job, s, readTail(out))
	}
	if d := time.Since(start); d > 2*time.Minute {
		t.Errorf("the job took %v to end after its server died", d)
	}
	log = readTail(out)
	t.Logf("job %s (its server step killed):\n%s", job, log)
	if !strings.Contains(log, "the job fails: an env server died") {
		t.Errorf("the job's output does not say an env server died:\n%s", log)
	}
	if !regexp.MustCompile(`connection lost: tcp://\S+:\d+`).MatchString(log) || !strings.Contains(log, "learner stopped (exit 1)") {
		t.Errorf("the learner did not stop on its own with the lost server's endpoint:\n%s", log)
	}
	if _, err := os.Stat(filepath.Join(run, "checkpoint.bin")); err != nil {
		t.Errorf("the stopped learner left no checkpoint: %v", err)
	}
}
