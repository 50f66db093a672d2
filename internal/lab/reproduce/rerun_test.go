package reproduce

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/provenance"
)

// A re-run from a command line must resolve the recorded config, every key but the iterations.
func TestSameConfig(t *testing.T) {
	write := func(text string) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	recorded := write(`{"env": "Copy-v0", "alpha": 0.05, "iters": 2000}`)
	for _, tc := range []struct {
		name, rerun, says string
	}{
		{"the same but the iterations", `{"iters": 30, "alpha": 0.05, "env": "Copy-v0"}`, ""},
		{"another weight", `{"env": "Copy-v0", "alpha": 1, "iters": 30}`, "at alpha: recorded 0.05, re-run 1"},
		{"a key the recorded run lacks", `{"env": "Copy-v0", "alpha": 0.05, "iters": 30, "explore": 0.3}`, "at explore: recorded (none), re-run 0.3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := SameConfig(recorded, write(tc.rerun))
			if tc.says == "" && err != nil || tc.says != "" && (err == nil || !strings.Contains(err.Error(), tc.says)) {
				t.Fatalf("SameConfig: %v; want %q", err, tc.says)
			}
		})
	}
}

// The iterations compared end where a later session's binary took over.
func TestFirstSpan(t *testing.T) {
	const a, b = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	for _, tc := range []struct {
		name     string
		sessions []provenance.Session
		want     int
	}{
		{"one session", []provenance.Session{{BinaryCommit: a}}, 100},
		{"resumed by the same binary", []provenance.Session{{BinaryCommit: a}, {BinaryCommit: a, FromIteration: 40}}, 100},
		{"resumed by another", []provenance.Session{{BinaryCommit: a}, {BinaryCommit: b, FromIteration: 40}}, 40},
		{"unstamped, resumed by another file", []provenance.Session{{BinarySHA256: "x"}, {BinarySHA256: "y", FromIteration: 7}}, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := FirstSpan(provenance.File{Sessions: tc.sessions}, 100); got != tc.want {
				t.Fatalf("FirstSpan = %d, want %d", got, tc.want)
			}
		})
	}
}

// A binary from before the child protocol re-runs the recorded pcl train command, with --out and
// --iters last; one from after it reads the run's config itself; a run not started by pcl train
// cannot be re-run by an old binary.
func TestRerunCommand(t *testing.T) {
	tree := t.TempDir()
	if got := ProtocolOf(tree); got != TrainCommand {
		t.Fatalf("a tree without cmd/pcl/reproduce.go: %v", got)
	}
	if err := os.MkdirAll(filepath.Join(tree, "cmd", "pcl"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "cmd", "pcl", "reproduce.go"), []byte(`const reproduceOutEnv = "`+ChildOutEnv+`"`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := ProtocolOf(tree); got != Child {
		t.Fatalf("a tree that knows %s: %v", ChildOutEnv, got)
	}
	st := Setting{Backend: "gonum", GOMAXPROCS: 2, Session: provenance.Session{Command: []string{"/bin/pcl-old", "train", "--out", "/x", "--env", "Copy-v0"}}}
	args, env, err := Rerun{Protocol: TrainCommand, Dir: "run", Out: "/tmp/o", Iters: 8, Setting: st}.command()
	if want := []string{"train", "--out", "/x", "--env", "Copy-v0", "--out", "/tmp/o", "--iters", "8", "--progress-every", "0"}; err != nil || !slices.Equal(args, want) {
		t.Errorf("train command: %q, %v; want %q", args, err, want)
	}
	if want := []string{"SPARSEPCL_BLAS=gonum", "GOMAXPROCS=2"}; !slices.Equal(env, want) {
		t.Errorf("train command's environment: %q, want %q", env, want)
	}
	args, env, err = Rerun{Protocol: Child, Dir: "run", Out: "/tmp/o", Iters: 8, Setting: st}.command()
	if want := []string{"reproduce", "--run", "run", "--iters", "8"}; err != nil || !slices.Equal(args, want) || !slices.Contains(env, ChildOutEnv+"=/tmp/o") {
		t.Errorf("child: %q %q, %v", args, env, err)
	}
	st.Session.Command = []string{"/bin/pcl-old", "sweep", "run", "--index", "0"}
	if _, _, err := (Rerun{Protocol: TrainCommand, Dir: "run", Setting: st}).command(); err == nil || !strings.Contains(err.Error(), "not pcl train") {
		t.Errorf("a sweep run by an old binary: %v", err)
	}
}
