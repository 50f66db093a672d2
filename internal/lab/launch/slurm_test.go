package launch

import (
	"os/exec"
	"strings"
	"testing"
)

func base() Slurm {
	return Slurm{Nodes: 2, CPUs: 3, Root: "/repo", Python: "/repo/.venv/bin/python", PCL: "/repo/bin/pcl",
		AuthFile: "/home/u/run.auth", Out: "/home/u/logs", Train: []string{"--env", "HalfCheetah-v5", "--out", "runs/it's"}}
}

// TestScript: the job asks for a server per node and a learner, quotes every path and flag, gives
// the learner a --server per server and the auth file, and is valid bash.
func TestScript(t *testing.T) {
	s := base()
	s.Time, s.Extra = "2:00:00", []string{"--partition=cpu"}
	text, err := s.Script()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"#SBATCH --nodes=2\n", "#SBATCH --ntasks=3\n", "#SBATCH --cpus-per-task=3\n", "#SBATCH --time=2:00:00\n", "#SBATCH --partition=cpu\n",
		"export SPARSEPCL_AUTH_FILE='/home/u/run.auth' PCL_LAUNCH_PYTHON='/repo/.venv/bin/python'",
		"    srun --ntasks=2 --ntasks-per-node=1 --cpus-per-task=3 --exact",
		"--bind tcp://0.0.0.0:0 --auth-file \"$SPARSEPCL_AUTH_FILE\"",
		`'/repo/bin/pcl' train '--env' 'HalfCheetah-v5' '--out' 'runs/it'\''s' "${args[@]}" --auth-file "$SPARSEPCL_AUTH_FILE"`,
		`args+=(--server "tcp://$node:$port")`,
		`while [ ! -e "$sdone" ] && [ ! -e "$ldone" ]; do sleep 0.5; done`, `scancel --signal=TERM "$SLURM_JOB_ID.1"`, `scancel --signal=TERM "$SLURM_JOB_ID.0"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("script lacks %q:\n%s", want, text)
		}
	}
	if bash, err := exec.LookPath("bash"); err == nil {
		cmd := exec.Command(bash, "-n")
		cmd.Stdin = strings.NewReader(text)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("bash -n: %v\n%s", err, out)
		}
	}
}

// TestScriptRefuses: what the job cannot run is refused before it is written.
func TestScriptRefuses(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Slurm)
		want string
	}{
		{"no nodes", func(s *Slurm) { s.Nodes = 0 }, "at least 1 node"},
		{"relative auth file", func(s *Slurm) { s.AuthFile = "run.auth" }, "auth file must be an absolute path"},
		{"a --server of the user's", func(s *Slurm) { s.Train = append(s.Train, "--server", "tcp://x:1") }, "gives pcl train its --server"},
		{"an --auth-file of the user's", func(s *Slurm) { s.Train = append(s.Train, "--auth-file=x") }, "and --auth-file flags itself"},
		{"a name with a space", func(s *Slurm) { s.Name = "a b" }, "no spaces"},
	}
	for _, tt := range tests {
		s := base()
		tt.edit(&s)
		if _, err := s.Script(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}
