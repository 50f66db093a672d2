package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/nn/checkpoint"
	"github.com/sparsepcl/sparsepcl/agent/provenance"
	"github.com/sparsepcl/sparsepcl/internal/lab/goldens"
)

var (
	updateGolden   = flag.Bool("update-golden", false, "rewrite testdata/golden from this tree's runs")
	verifyCoverage = flag.Bool("verify-golden-coverage", false, "re-run one covered run per binary commit of each golden with this tree's code (pcl reproduce --here) and record the outcome in testdata/golden/goldens.json")
)

// goldenManifest lists the golden runs (internal/lab/goldens): fixed-seed short runs whose behaviour
// a refactoring must keep bit for bit: every metrics.csv column but the wall time, and a checksum
// of every tensor of the final checkpoint (the parameters and the optimiser state). The first
// were recorded after the speed kernels landed and before the one-agent redesign, with OpenBLAS
// on an AVX2 machine; then again with the pure-Go BLAS, from a tree that reproduces those first
// records bit for bit on an AVX-512 machine with OPENBLAS_CORETYPE=Haswell. Since issue 68 every
// shipped default has one, and each names the committed runs whose arithmetic it covers.
var goldenManifest = filepath.Join("testdata", "golden", "goldens.json")

// TestGoldenRuns requires the golden runs to reproduce testdata/golden exactly, each golden's
// config to be its covered runs' (but for what it shrinks), and every binary commit of its
// covered runs to have been re-run by the code that recorded it (goldens.json's verified). After
// a change that is meant to alter training, rerun with -update-golden and then
// -verify-golden-coverage, and say in the commit which committed results it moves out of
// reproduction by today's code.
func TestGoldenRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("golden runs train for about two minutes")
	}
	// The pure-Go BLAS: OpenBLAS picks its kernels by CPU, and an AVX-512 machine's core
	// (SkylakeX, Cooperlake) sums in another order than an AVX2 machine's (Haswell, Zen). The
	// pure-Go products and this module's cgo kernels (no fused multiply-adds in any of their
	// clones) round alike on every amd64 CPU with FMA, which Go's math.Exp uses where it exists.
	t.Setenv("SPARSEPCL_BLAS", "gonum")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	manifest, err := goldens.Read(goldenManifest)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join("..", "..")
	for i, g := range manifest {
		t.Run(g.Name, func(t *testing.T) {
			if g.Remote {
				needServer(t)
			}
			dir := filepath.Join(t.TempDir(), "run")
			var o, e bytes.Buffer
			args := append([]string{"train", "--out", dir, "--seed", "1", "--progress-every", "0"}, g.Args...)
			if code := runMain(ctx, args, &o, &e); code != 0 {
				t.Fatalf("pcl %s: exit %d: %s", strings.Join(args, " "), code, e.String())
			}
			path := filepath.Join("testdata", "golden", g.FileName())
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
			switch {
			case *updateGolden && g.File == "":
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			case !*updateGolden:
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (record it with go test ./cmd/pcl -run TestGoldenRuns -update-golden)", err)
				}
				if diff := firstDiff(string(want), got); diff != "" {
					t.Errorf("pcl %s no longer reproduces %s: %s", strings.Join(args, " "), path, diff)
				}
			}
			runs, err := g.CoveredRuns(root)
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) == 0 && len(g.Covers) > 0 {
				t.Errorf("%s covers %v, which match no run", g.Name, g.Covers)
			}
			for _, r := range runs {
				if err := sameConfigBut(filepath.Join(root, r), dir, append([]string{"seed"}, g.ShrunkKeys...)); err != nil {
					t.Errorf("%s covers %s, but: %v", g.Name, r, err)
				}
			}
			if *verifyCoverage {
				manifest[i].Verified = verifyGolden(ctx, t, root, path, runs)
				return
			}
			checkVerified(t, g, root, path, runs)
		})
	}
	if *verifyCoverage && !t.Failed() {
		if err := goldens.Write(goldenManifest, manifest); err != nil {
			t.Fatal(err)
		}
	}
}

// coverageIters is how many iterations a coverage verification re-runs.
const coverageIters = 30

// verifyGolden re-runs the first run of every binary commit among runs with this tree's code
// (pcl reproduce --here, with the run's recorded BLAS setting) and returns the outcomes.
func verifyGolden(ctx context.Context, t *testing.T, root, golden string, runs []string) []goldens.Verification {
	t.Helper()
	t.Setenv(asPCLEnv, "1") // the re-run is a child of this test binary acting as pcl
	sum, err := goldens.FileSHA256(golden)
	if err != nil {
		t.Fatal(err)
	}
	var out []goldens.Verification
	seen := map[string]bool{}
	for _, r := range runs {
		c := binaryCommit(t, filepath.Join(root, r))
		if seen[c] {
			continue
		}
		seen[c] = true
		var o, e bytes.Buffer
		code := runMain(ctx, []string{"reproduce", "--here", "--run", filepath.Join(root, r), "--iters", strconv.Itoa(coverageIters)}, &o, &e)
		lines := strings.Split(strings.TrimSpace(o.String()), "\n")
		verdict := strings.TrimPrefix(lines[len(lines)-1], "across versions: ")
		if code != exitOK && code != exitFailure || !strings.HasPrefix(verdict, "identical") && !strings.HasPrefix(verdict, "the runs part") {
			t.Fatalf("pcl reproduce --here --run %s: exit %d\n%s%s", r, code, o.String(), e.String())
		}
		out = append(out, goldens.Verification{Commit: c, Run: r, Iters: coverageIters, Result: verdict, GoldenSHA256: sum})
	}
	return out
}

// checkVerified requires a verification of every binary commit among runs, made against the
// golden file as it is.
func checkVerified(t *testing.T, g goldens.Golden, root, golden string, runs []string) {
	t.Helper()
	sum, err := goldens.FileSHA256(golden)
	if err != nil {
		t.Fatal(err)
	}
	const redo = "go test ./cmd/pcl -run TestGoldenRuns -verify-golden-coverage, and say in the commit which committed results it moves out of reproduction"
	for _, v := range g.Verified {
		if v.GoldenSHA256 != sum {
			t.Errorf("%s was rerecorded since its covered runs were verified against it (%s): redo it with %s", golden, v.Run, redo)
			return
		}
	}
	for _, r := range runs {
		c := binaryCommit(t, filepath.Join(root, r))
		if !slices.ContainsFunc(g.Verified, func(v goldens.Verification) bool { return v.Commit == c }) {
			t.Errorf("%s covers %s (binary %q), and no run of that binary was verified: %s", g.Name, r, c, redo)
		}
	}
}

// binaryCommit is the commit that built the binary of run's first session ("" when unstamped).
func binaryCommit(t *testing.T, run string) string {
	t.Helper()
	f, err := provenance.Read(run)
	if err != nil || len(f.Sessions) == 0 {
		t.Fatalf("%s: %v (no session)", run, err)
	}
	c, _, _ := f.Sessions[0].Built()
	return c
}

// sameConfigBut checks that the config.json of runs a and b agree on every key both have but
// those in except.
func sameConfigBut(a, b string, except []string) error {
	read := func(d string) (map[string]json.RawMessage, error) {
		data, err := os.ReadFile(filepath.Join(d, "config.json"))
		if err != nil {
			return nil, err
		}
		var m map[string]json.RawMessage
		return m, json.Unmarshal(data, &m)
	}
	ca, err := read(a)
	if err != nil {
		return err
	}
	cb, err := read(b)
	if err != nil {
		return err
	}
	for k, va := range ca {
		if vb, ok := cb[k]; ok && !slices.Contains(except, k) && !bytes.Equal(va, vb) {
			return fmt.Errorf("config.json %s: the run's %s, the golden's %s", k, va, vb)
		}
	}
	return nil
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
