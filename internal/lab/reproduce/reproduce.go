// Package reproduce re-runs a training run as it was recorded and says whether it came out the
// same: the setting that decides the numbers (the BLAS backend, its core type and thread count, the
// Go threads; the binary and the env server's versions, which are reported) read from the run's
// run.json, and the metrics of two runs compared cell by cell, every column but the wall time.
package reproduce

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"github.com/sparsepcl/sparsepcl/agent/provenance"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
)

// Setting is what a run's first session recorded of what decides its numbers.
type Setting struct {
	Backend    string // SPARSEPCL_BLAS: "openblas" or "gonum"
	Core       string // OpenBLAS's core type (OPENBLAS_CORETYPE); "" when unknown
	Threads    int    // OpenBLAS's threads (0: unknown)
	GOMAXPROCS int    // 0: unknown
	Session    provenance.Session
}

// blasLine matches the backend line run.json records: "openblas (libopenblas.so.0, 1 threads, core
// Cooperlake)".
var blasLine = regexp.MustCompile(`^openblas \([^,]*, (\d+) threads(?:, core ([A-Za-z0-9_]+))?\)`)

// Recorded reads the setting of the run in dir from its run.json (its first session: the one that
// started the run).
func Recorded(dir string) (Setting, error) {
	f, err := provenance.Read(dir)
	if err != nil {
		return Setting{}, err
	}
	if len(f.Sessions) == 0 {
		return Setting{}, fmt.Errorf("reproduce: %s: run.json records no session", dir)
	}
	s := f.Sessions[0]
	st := Setting{GOMAXPROCS: s.GOMAXPROCS, Session: s}
	switch m := blasLine.FindStringSubmatch(s.BLAS); {
	case m != nil:
		st.Backend, st.Core = "openblas", m[2]
		st.Threads, _ = strconv.Atoi(m[1])
	case len(s.BLAS) >= 5 && s.BLAS[:5] == "gonum":
		st.Backend = "gonum"
	default:
		return Setting{}, fmt.Errorf("reproduce: %s: unknown BLAS backend %q in run.json", dir, s.BLAS)
	}
	return st, nil
}

// Env is the environment a process needs to run with st's numbers, set before any BLAS loads.
func (st Setting) Env() []string {
	env := []string{"SPARSEPCL_BLAS=" + st.Backend}
	if st.Core != "" {
		env = append(env, "OPENBLAS_CORETYPE="+st.Core)
	}
	if st.Threads > 0 {
		env = append(env, "OPENBLAS_NUM_THREADS="+strconv.Itoa(st.Threads))
	}
	if st.GOMAXPROCS > 0 {
		env = append(env, "GOMAXPROCS="+strconv.Itoa(st.GOMAXPROCS))
	}
	return env
}

// Diff is the outcome of comparing two runs' metrics over their first Rows iterations.
type Diff struct {
	Rows      int  // iterations compared
	Identical bool // every compared cell equal
	// The first cell that differs (when not Identical).
	Iteration            int
	Column               string
	Recorded, Reproduced string
}

func (d Diff) String() string {
	if d.Identical {
		return fmt.Sprintf("identical for %d iterations (every column but wall_seconds)", d.Rows)
	}
	return fmt.Sprintf("the runs part at iteration %d, column %s: recorded %s, reproduced %s", d.Iteration, d.Column, d.Recorded, d.Reproduced)
}

// Compare compares the metrics.csv of the recorded run in dir with the reproduced run in
// reproduced, over the first n iterations (fewer when either has fewer), cell by cell in every
// column both files have but wall_seconds.
func Compare(dir, reproduced string, n int) (Diff, error) {
	a, err := readCSV(runstore.Dir(dir).File(runstore.MetricsFile))
	if err != nil {
		return Diff{}, err
	}
	b, err := readCSV(runstore.Dir(reproduced).File(runstore.MetricsFile))
	if err != nil {
		return Diff{}, err
	}
	rows := min(n, len(a)-1, len(b)-1)
	if rows < 1 {
		return Diff{}, fmt.Errorf("reproduce: no iterations to compare (recorded %d, reproduced %d)", len(a)-1, len(b)-1)
	}
	for i := 1; i <= rows; i++ {
		for j, col := range a[0] {
			k := slices.Index(b[0], col)
			if col == "wall_seconds" || k < 0 {
				continue
			}
			if a[i][j] != b[i][k] {
				return Diff{Rows: rows, Iteration: i - 1, Column: col, Recorded: a[i][j], Reproduced: b[i][k]}, nil
			}
		}
	}
	return Diff{Rows: rows, Identical: true}, nil
}

// readCSV reads a whole metrics file (header first).
func readCSV(path string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reproduce: %w", err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) == 0 {
		return nil, fmt.Errorf("reproduce: %s: %v", filepath.Base(path), err)
	}
	return recs, nil
}
