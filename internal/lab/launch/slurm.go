// Package launch writes the Slurm job that runs one training run with its env servers on other
// nodes (`pcl launch slurm`): in one allocation, `srun` starts the env servers as one job step (one
// per node, each on a free tcp port, all with one credential file), the job gathers their
// endpoints from their ready lines, and starts the learner as another step with `--server` for
// each. When the servers' step ends before the learner, the learner, whose connections fail, stops
// with its own error (or, still running a minute later, is stopped with SIGTERM and saves a
// checkpoint), and the job fails naming the cause; when the learner ends, the servers are stopped
// and the job ends with the learner's status. Sweeps of whole runs are `pcl sweep`'s.
package launch

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"text/template"
	"time"
)

// Slurm says what the job runs and where.
type Slurm struct {
	Name     string   // job name
	Nodes    int      // nodes, each with one env server; the learner shares the first
	CPUs     int      // CPUs per env server (and for the learner)
	Time     string   // wall-time limit (sbatch --time), empty: the partition's
	Root     string   // absolute repository root: python_server lives there (the job runs where sbatch was run)
	Python   string   // absolute interpreter of the servers
	PCL      string   // absolute pcl binary of the learner
	AuthFile string   // absolute credential file, mode 0600, on a file system every node sees
	Out      string   // absolute directory of the job's logs (the servers' ready lines among them)
	Train    []string // pcl train's flags (--out among them); --server and --auth-file are added
	// StartTimeout bounds the wait for the servers' ready lines (0: 5 minutes).
	StartTimeout time.Duration
	// Extra are more #SBATCH options, one per entry, e.g. "--partition=gpu".
	Extra []string
}

// check says what is wrong with s, if anything.
func (s Slurm) check() error {
	if s.Nodes < 1 || s.CPUs < 1 {
		return fmt.Errorf("launch: want at least 1 node and 1 CPU per server, got %d and %d", s.Nodes, s.CPUs)
	}
	for _, p := range []struct{ name, v string }{{"root", s.Root}, {"python", s.Python}, {"pcl", s.PCL}, {"auth file", s.AuthFile}, {"log directory", s.Out}} {
		if !filepath.IsAbs(p.v) {
			return fmt.Errorf("launch: the %s must be an absolute path, got %q", p.name, p.v)
		}
	}
	for _, a := range s.Train {
		if a == "--server" || a == "-server" || strings.HasPrefix(a, "--server=") || strings.HasPrefix(a, "--auth-file") || strings.HasPrefix(a, "-auth-file") {
			return errors.New("launch: the job gives pcl train its --server and --auth-file flags itself")
		}
	}
	if strings.ContainsAny(s.Name, " \n'\"") {
		return fmt.Errorf("launch: job name %q: no spaces or quotes", s.Name)
	}
	return nil
}

// Script returns the sbatch script.
func (s Slurm) Script() (string, error) {
	if err := s.check(); err != nil {
		return "", err
	}
	if s.StartTimeout <= 0 {
		s.StartTimeout = 5 * time.Minute
	}
	if s.Name == "" {
		s.Name = "pcl-train"
	}
	var b bytes.Buffer
	err := script.Execute(&b, map[string]any{
		"S": s, "Tasks": s.Nodes + 1, "Wait": int(s.StartTimeout.Seconds()), "Grace": graceSeconds,
		"Root": quote(s.Root), "Python": quote(s.Python), "PCL": quote(s.PCL), "Auth": quote(s.AuthFile), "Out": quote(s.Out),
		"Train": quoteAll(s.Train),
	})
	if err != nil {
		return "", fmt.Errorf("launch: %w", err)
	}
	return b.String(), nil
}

// graceSeconds is how long the job lets the learner stop on its own after the servers' step ended
// (it does at once when the servers' connections close; a dead node's may hang until its timeout).
const graceSeconds = 60

// quote quotes a word for bash.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func quoteAll(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = quote(w)
	}
	return strings.Join(q, " ")
}

var script = template.Must(template.New("slurm").Parse(`#!/bin/bash
# One training run with its env servers on other nodes, written by pcl launch slurm: step 0 runs an
# env server on each of the {{.S.Nodes}} node(s) (tcp, PLAIN credentials from the auth file), step 1 the learner.
#SBATCH --job-name={{.S.Name}}
#SBATCH --nodes={{.S.Nodes}}
#SBATCH --ntasks={{.Tasks}}
#SBATCH --cpus-per-task={{.S.CPUs}}
{{- if .S.Time}}
#SBATCH --time={{.S.Time}}
{{- end}}
{{- range .S.Extra}}
#SBATCH {{.}}
{{- end}}
set -uo pipefail
out={{.Out}}
mkdir -p "$out" || exit 1
say() { echo "pcl launch: $*" >&2; }
export SPARSEPCL_AUTH_FILE={{.Auth}} PCL_LAUNCH_PYTHON={{.Python}}
export SPARSEPCL_ROOT={{.Root}} PYTHONPATH={{.Root}}${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1

# Each step runs in the background and leaves its exit status in a file when it ends (portable to
# bash 4, which has no wait -n -p).
sdone="$out/servers-$SLURM_JOB_ID.exit"
ldone="$out/learner-$SLURM_JOB_ID.exit"
rm -f "$sdone" "$ldone"

# Step 0: one env server per node, each on a free port; its first line names its node, the next is
# the server's ready line with the port.
{
    srun --ntasks={{.S.Nodes}} --ntasks-per-node=1 --cpus-per-task={{.S.CPUs}} --exact \
        --output="$out/server-%j-%t.out" --error="$out/server-%j-%t.err" \
        bash -c 'echo "node $SLURMD_NODENAME"; exec "$PCL_LAUNCH_PYTHON" -m python_server --bind tcp://0.0.0.0:0 --auth-file "$SPARSEPCL_AUTH_FILE"'
    echo $? >"$sdone.tmp" && mv "$sdone.tmp" "$sdone"
} &

# Their endpoints, from the ready lines (node name and port), within {{.Wait}} s.
args=()
for ((t = 0; t < {{.S.Nodes}}; t++)); do
    f="$out/server-$SLURM_JOB_ID-$t.out"
    for ((i = 0; ; i++)); do
        node=$(sed -n 's/^node //p' "$f" 2>/dev/null | head -n 1)
        port=$(sed -n 's/^{"ready": true.*"endpoint": "tcp:[^"]*:\([0-9][0-9]*\)".*/\1/p' "$f" 2>/dev/null | head -n 1)
        [ -n "$node" ] && [ -n "$port" ] && break
        if [ -e "$sdone" ]; then
            say "env server $t exited before it was ready:"; tail -n 40 "$out/server-$SLURM_JOB_ID-$t.err" >&2; exit 1
        fi
        if ((i >= {{.Wait}} * 5)); then
            say "env server $t not ready within {{.Wait}} s"; scancel --signal=TERM "$SLURM_JOB_ID.0"; wait; exit 1
        fi
        sleep 0.2
    done
    say "env server $t: tcp://$node:$port"
    args+=(--server "tcp://$node:$port")
done

# Step 1: the learner.
{
    srun --ntasks=1 --nodes=1 --cpus-per-task={{.S.CPUs}} --exact \
        {{.PCL}} train {{.Train}} "${args[@]}" --auth-file "$SPARSEPCL_AUTH_FILE"
    echo $? >"$ldone.tmp" && mv "$ldone.tmp" "$ldone"
} &

# Whichever step ends first. The servers are step 0 and the learner step 1 (this script's first and
# second srun); scancel --signal=TERM lets each stop cleanly, where a signal to srun kills its step.
while [ ! -e "$sdone" ] && [ ! -e "$ldone" ]; do sleep 0.5; done
if [ ! -e "$ldone" ]; then
    say "the env servers' step ended (exit $(cat "$sdone")) while the learner runs: the learner loses its connection to it"
    for ((i = 0; i < {{.Grace}} * 2; i++)); do
        [ -e "$ldone" ] && break
        sleep 0.5
    done
    if [ ! -e "$ldone" ]; then
        say "the learner still runs after {{.Grace}} s: stopping it (SIGTERM: it saves a checkpoint)"
        scancel --signal=TERM "$SLURM_JOB_ID.1"
    fi
    wait
    say "learner stopped (exit $(cat "$ldone")); the job fails: an env server died"
    exit 1
fi
status=$(cat "$ldone")
if [ "$status" != 0 ]; then # a learner that lost a server may stop before srun reports the servers' step ended
    for ((i = 0; i < 20; i++)); do
        [ -e "$sdone" ] && break
        sleep 0.5
    done
fi
if [ -e "$sdone" ]; then
    say "learner stopped (exit $status) and the env servers' step ended (exit $(cat "$sdone")); the job fails: an env server died"
    wait
    exit 1
fi
say "learner finished (exit $status); stopping the env servers"
scancel --signal=TERM "$SLURM_JOB_ID.0"
wait
exit "$status"
`))
