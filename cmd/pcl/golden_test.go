package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/csv"
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/nn/checkpoint"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden from this tree's runs")

// goldenRuns are the fixed-seed short runs whose behaviour a refactoring must keep bit for bit:
// every metrics.csv column but the wall time, and a checksum of every tensor of the final
// checkpoint (the parameters and the optimiser state). They were recorded after the speed
// kernels landed and before the one-agent redesign, with OpenBLAS on an AVX2 machine; then again
// with the pure-Go BLAS, from a tree that reproduces those first records bit for bit on an
// AVX-512 machine with OPENBLAS_CORETYPE=Haswell.
var goldenRuns = []struct {
	name   string
	remote bool // needs the Python server
	args   []string
	golden string // the golden file, when another run's (default: name)
}{
	{"copy20-sparse", false, []string{"--env", "Copy-v0", "--base", "5", "--algo", "sparse", "--iters", "30", "--eval-every", "10", "--eval-episodes", "20"}, ""},
	{"copy20-soft", false, []string{"--env", "Copy-v0", "--base", "5", "--algo", "soft", "--iters", "30", "--eval-every", "10", "--eval-episodes", "20"}, ""},
	{"copy160-tsallis1.5", false, []string{"--env", "Copy-v0", "--base", "40", "--algo", "tsallis", "--tsallis-q", "1.5", "--iters", "10", "--eval-every", "5", "--eval-episodes", "20"}, ""},
	// --alpha 0.05 was CartPole's default weight when this was recorded; the long-episode preset
	// gives mlp runs α 1 now.
	{"cartpole-sparse", false, []string{"--env", "CartPole-v1", "--algo", "sparse", "--alpha", "0.05", "--iters", "30", "--eval-every", "10"}, ""},
	{"halfcheetah3-sparse", true, []string{"--env", "HalfCheetah-v5", "--grid", "3", "--norm-obs", "--algo", "sparse", "--alpha", "0.5", "--iters", "20", "--eval-every", "10"}, ""},
	{"halfcheetah3-soft", true, []string{"--env", "HalfCheetah-v5", "--grid", "3", "--norm-obs", "--algo", "soft", "--alpha", "0.01", "--iters", "20", "--eval-every", "10"}, ""},
	// Issue 51's levers at their defaults, given explicitly: one replay step, no lagged network, no
	// trust region, the run above bit for bit.
	{"halfcheetah3-sparse-levers-off", true, []string{"--env", "HalfCheetah-v5", "--grid", "3", "--norm-obs", "--algo", "sparse", "--alpha", "0.5", "--iters", "20", "--eval-every", "10",
		"--train-steps", "1", "--target-lag", "0", "--trust-region", "0"}, "halfcheetah3-sparse"},
}

// TestGoldenRuns requires the golden runs to reproduce testdata/golden exactly. After a change
// that is meant to alter training, rerun with -update-golden and say why in the commit.
func TestGoldenRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("golden runs train for about a minute")
	}
	// The pure-Go BLAS: OpenBLAS picks its kernels by CPU, and an AVX-512 machine's core
	// (SkylakeX, Cooperlake) sums in another order than an AVX2 machine's (Haswell, Zen). The
	// pure-Go products and this module's cgo kernels (no fused multiply-adds in any of their
	// clones) round alike on every amd64 CPU with FMA, which Go's math.Exp uses where it exists.
	t.Setenv("SPARSEPCL_BLAS", "gonum")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for _, run := range goldenRuns {
		t.Run(run.name, func(t *testing.T) {
			if run.remote {
				needServer(t)
			}
			dir := filepath.Join(t.TempDir(), "run")
			var o, e bytes.Buffer
			args := append([]string{"train", "--out", dir, "--seed", "1", "--progress-every", "0"}, run.args...)
			if code := runMain(ctx, args, &o, &e); code != 0 {
				t.Fatalf("pcl %s: exit %d: %s", strings.Join(args, " "), code, e.String())
			}
			golden := cmp.Or(run.golden, run.name)
			path := filepath.Join("testdata", "golden", golden+".txt")
			var columns []string // the golden file's: columns added since it was recorded are not compared
			if !*updateGolden {
				if want, err := os.ReadFile(path); err == nil {
					columns = strings.Split(strings.SplitN(string(want), "\n", 2)[0], ",")
				}
			}
			got, err := goldenRecord(dir, columns)
			if err != nil {
				t.Fatal(err)
			}
			if *updateGolden {
				if golden != run.name {
					return // another run's record
				}
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (record it with go test ./cmd/pcl -run TestGoldenRuns -update-golden)", err)
			}
			if diff := firstDiff(string(want), got); diff != "" {
				t.Errorf("pcl %s no longer reproduces %s: %s", strings.Join(args, " "), path, diff)
			}
		})
	}
}

// goldenRecord is a run's metrics.csv without the wall_seconds column (only the given columns,
// in their order, when columns is not nil), followed by the SHA-256 of its final checkpoint's
// tensors (by name: name, shape and float32 bits).
func goldenRecord(dir string, columns []string) (string, error) {
	f, err := os.Open(filepath.Join(dir, "metrics.csv"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return "", fmt.Errorf("metrics.csv: %w", err)
	}
	if columns == nil {
		for _, h := range rows[0] {
			if h != "wall_seconds" {
				columns = append(columns, h)
			}
		}
	}
	index := make([]int, len(columns))
	for j, c := range columns {
		if index[j] = slices.Index(rows[0], c); index[j] < 0 {
			return "", fmt.Errorf("metrics.csv has no column %s", c)
		}
	}
	var b strings.Builder
	for _, r := range rows {
		fields := make([]string, len(index))
		for j, i := range index {
			fields[j] = r[i]
		}
		b.WriteString(strings.Join(fields, ",") + "\n")
	}
	ck, err := checkpoint.Load(filepath.Join(dir, "checkpoint.bin"))
	if err != nil {
		return "", err
	}
	tensors := ck.Tensors
	sort.Slice(tensors, func(i, j int) bool { return tensors[i].Name < tensors[j].Name })
	h := sha256.New()
	for _, tn := range tensors {
		fmt.Fprintf(h, "%s %dx%d\n", tn.Name, tn.Value.Rows, tn.Value.Cols)
		for _, v := range tn.Value.Data {
			_ = binary.Write(h, binary.LittleEndian, math.Float32bits(float32(v)))
		}
	}
	fmt.Fprintf(&b, "checkpoint tensors: %d, sha256 %s\n", len(tensors), hex.EncodeToString(h.Sum(nil)))
	return b.String(), nil
}

// firstDiff names the first line where got departs from want, or returns "".
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d (header %q):\n  want %s\n  got  %s", i+1, w[0], wl, gl)
		}
	}
	return ""
}
