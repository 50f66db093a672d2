// Package sweep runs many training runs at once, as opposed to one run (agent/train): planning
// a grid of runs into a manifest (Grid, and the Compare preset of `pcl compare`), running one of
// them by its index (so that a Slurm array, a Kubernetes Indexed Job or the local N-at-a-time
// runner, in this process or in single-threaded subprocesses, can execute it) and resuming a run
// where it stopped. Reading what the runs reached is package evaluation's.
//
// A sweep directory holds manifest.json and runs/<id>/, one agent/train run directory per run,
// named by ID (the one naming scheme). The manifest is written once; planning again into the same
// directory is accepted only when it plans the same runs, or the same runs with larger budgets,
// so a manifest under which runs exist never loses one. A run directory whose config differs from
// its manifest entry (apart from a larger iteration budget) is refused, and a finished run is
// never trained again: nothing that finished is overwritten.
package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sparsepcl/sparsepcl/agent/atomicfile"
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/success"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
)

// ManifestFile is the manifest's name inside a sweep directory; RunsDir holds the run directories.
const (
	ManifestFile = "manifest.json"
	RunsDir      = "runs"
	version      = 1
)

// Run is one planned training run.
type Run struct {
	Index  int           `json:"index"`
	ID     string        `json:"id"` // directory name under runs/
	Config config.Config `json:"config"`
}

// Manifest is a planned sweep.
type Manifest struct {
	Version int    `json:"version"`
	Name    string `json:"name,omitempty"`
	Runs    []Run  `json:"runs"`
}

// Cell is one (task, size, algorithm, weight, weight control) of a sweep; it is run with Seeds
// seeds.
type Cell struct {
	Env   string
	Base  int
	Algo  config.Algo
	Alpha float64
	Q     float64 // Tsallis q (tsallis algo only)
	Iters int     // 0: the spec's base config's
	// Control is how the weight moves over the run: "" keeps the base config's (alpha_start,
	// alpha_decay, alpha_auto), ControlFixed holds Alpha, ControlDecay is the schedule from
	// AlphaStart down to Alpha at the base config's alpha_decay, ControlAuto the automatic weight
	// from Alpha.
	Control    string
	AlphaStart float64 // ControlDecay only
}

// String names the cell's fields, its control only when it sets one.
func (cell Cell) String() string {
	s := fmt.Sprintf("{Env:%s Base:%d Algo:%s Alpha:%g Q:%g Iters:%d", cell.Env, cell.Base, cell.Algo, cell.Alpha, cell.Q, cell.Iters)
	if cell.Control != "" {
		s += " Control:" + cell.Control
	}
	if cell.AlphaStart != 0 {
		s += fmt.Sprintf(" AlphaStart:%g", cell.AlphaStart)
	}
	return s + "}"
}

// The weight controls a sweep can set per cell (pcl sweep plan --alpha-controls).
const (
	ControlFixed = "fixed"
	ControlDecay = "decay"
	ControlAuto  = config.WeightAuto
)

// applyControl sets c's weight control to the cell's.
func (cell Cell) applyControl(c *config.Config) error {
	switch cell.Control {
	case "":
	case ControlFixed:
		c.AlphaStart, c.AlphaDecay, c.AlphaAuto = 0, 0, false
	case ControlDecay:
		if c.AlphaDecay == 0 {
			return fmt.Errorf("the %s control needs alpha_decay", ControlDecay)
		}
		c.AlphaStart, c.AlphaAuto = cell.AlphaStart, false
	case ControlAuto:
		c.AlphaStart, c.AlphaDecay, c.AlphaAuto = 0, 0, true
	default:
		return fmt.Errorf("unknown weight control %q (%s, %s, %s)", cell.Control, ControlFixed, ControlDecay, ControlAuto)
	}
	return nil
}

// CellError is the invalid config of a cell's runs. The cell's fields (env, base, algo, alpha,
// tsallis_q, seed, iters) come from the sweep's own options and the rest from its base config, so
// Text, which names config fields by the names it is given (a program's flags, as for a
// config.FieldError), names only the base config's that way.
type CellError struct {
	Cell Cell
	Err  error
}

func (e *CellError) Error() string { return fmt.Sprintf("sweep: cell %+v: %v", e.Cell, e.Err) }
func (e *CellError) Unwrap() error { return e.Err }

// Text is the message with the base config's fields named by name.
func (e *CellError) Text(name func(field string) string) string {
	return fmt.Sprintf("sweep: cell %+v: %s", e.Cell, config.Renamed(e.Err, func(field string) string {
		switch field {
		case "env", "base", "algo", "alpha", "tsallis_q", "seed", "iters":
			return field
		}
		return name(field)
	}))
}

// Spec describes a sweep: every run is Base with one cell's fields and one seed set.
type Spec struct {
	Name      string
	Base      config.Config
	Cells     []Cell
	Seeds     int
	FirstSeed int64
	// TaskThresholds sets each run's reward threshold to its task's (agent/success) instead of
	// Base's.
	TaskThresholds bool
}

// ID names a run's directory, the one naming scheme of every run this package plans: env (less
// "-v0"), its size (|A| for the algorithmic tasks, so that sizes read as in the paper; the action
// grid for a discretised Box), algorithm, weight, q for Tsallis, the weight's control when it
// moves (-auto, or -from<start> for a schedule), seed. For example Copy-A20-sparse-a0.05-s1,
// HalfCheetah-v5-grid3-soft-a0.01-s2, CartPole-v1-sparse-a0.1-s1, Copy-A40-sparse-a0.01-auto-s3.
func ID(c config.Config) string {
	id := strings.TrimSuffix(c.Env, "-v0")
	if a, err := NumActions(c.Env, c.Base); err == nil {
		id += fmt.Sprintf("-A%d", a)
	} else if c.Grid > 0 {
		id += fmt.Sprintf("-grid%d", c.Grid)
	}
	id += fmt.Sprintf("-%s-a%s", c.Algo, strconv.FormatFloat(c.Alpha, 'g', -1, 64))
	if c.Algo == config.AlgoTsallis {
		id += "-q" + strconv.FormatFloat(c.TsallisQ, 'g', -1, 64)
	}
	switch c.WeightMode() {
	case config.WeightLearned:
		id += "-auto"
	case config.WeightSchedule:
		id += "-from" + strconv.FormatFloat(c.AlphaStart, 'g', -1, 64)
	}
	return id + fmt.Sprintf("-s%d", c.Seed)
}

// NumActions is |A| of an algorithmic task at base: moves * 2 * base.
func NumActions(env string, base int) (int, error) {
	t, err := algorithmic.TaskByID(env)
	if err != nil {
		return 0, fmt.Errorf("sweep: %w", err)
	}
	return t.Moves() * 2 * base, nil
}

// BaseFor derives the base of an algorithmic task from an action-space size |A| = moves*2*base.
func BaseFor(env string, actions int) (int, error) {
	t, err := algorithmic.TaskByID(env)
	if err != nil {
		return 0, fmt.Errorf("sweep: %w", err)
	}
	per := t.Moves() * 2
	if actions%per != 0 || actions/per < 2 {
		return 0, fmt.Errorf("sweep: %s has |A| = %d*base; %d is not that for a base >= 2", env, per, actions)
	}
	return actions / per, nil
}

// Task is one algorithmic task of a preset and its sizes |A|.
type Task struct {
	Env     string
	Actions []int
}

// Figure1 is the grid of the paper's Figure 1 (and its appendix's ReversedAddition): |A| per task.
func Figure1() []Task {
	return []Task{
		{"Copy-v0", []int{20, 40, 80, 160}},
		{"DuplicatedInput-v0", []int{20, 80, 160, 320}},
		{"RepeatCopy-v0", []int{20, 40, 80, 160}},
		{"Reverse-v0", []int{16, 32, 64, 128}},
		{"ReversedAddition-v0", []int{40, 64, 96}},
	}
}

// Plan expands a spec into a manifest: cells in order, seeds FirstSeed.. within each cell.
func Plan(s Spec) (Manifest, error) {
	if s.Seeds < 1 {
		return Manifest{}, fmt.Errorf("sweep: %d seeds, want >= 1", s.Seeds)
	}
	if len(s.Cells) == 0 {
		return Manifest{}, errors.New("sweep: no cells to plan")
	}
	m := Manifest{Version: version, Name: s.Name}
	seen := map[string]bool{}
	for _, cell := range s.Cells {
		for k := range s.Seeds {
			c := s.Base
			c.Env, c.Base, c.Algo, c.Alpha, c.Seed = cell.Env, cell.Base, cell.Algo, cell.Alpha, s.FirstSeed+int64(k)
			if cell.Algo == config.AlgoTsallis && cell.Q != 0 {
				c.TsallisQ = cell.Q
			}
			if cell.Iters > 0 {
				c.Iters = cell.Iters
			}
			if err := cell.applyControl(&c); err != nil {
				return Manifest{}, &CellError{Cell: cell, Err: err}
			}
			if s.TaskThresholds {
				c.RewardThreshold = success.DefaultThreshold(c.Env, c.RewardThreshold)
			}
			if err := c.Validate(); err != nil {
				return Manifest{}, &CellError{Cell: cell, Err: err}
			}
			id := ID(c)
			if seen[id] {
				return Manifest{}, fmt.Errorf("sweep: run %s is planned twice", id)
			}
			seen[id] = true
			m.Runs = append(m.Runs, Run{Index: len(m.Runs), ID: id, Config: c})
		}
	}
	return m, nil
}

// Write saves m as dir/manifest.json. When a manifest is already there, the call succeeds only if
// it plans the same runs (then nothing is written), or the same runs with larger budgets (then m
// replaces it): runs may exist under it.
func Write(dir string, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("sweep: encode manifest: %w", err)
	}
	b = append(b, '\n')
	path := filepath.Join(dir, ManifestFile)
	if old, err := os.ReadFile(path); err == nil {
		if bytes.Equal(old, b) {
			return nil
		}
		prev, perr := decode(old, path)
		if perr != nil {
			return fmt.Errorf("sweep: %s exists and is unreadable (%v); plan into another directory", path, perr)
		}
		if !grows(prev, m) {
			return fmt.Errorf("sweep: %s already plans another sweep (%s); plan into another directory, or move it away yourself",
				path, describeChange(prev, m))
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("sweep: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	if err := atomicfile.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	return nil
}

// grows reports whether b plans the runs of a, under the same name, with budgets at least as
// large and nothing else changed: the runs under a stay valid (they resume to the new budget).
func grows(a, b Manifest) bool {
	if a.Name != b.Name || len(a.Runs) != len(b.Runs) {
		return false
	}
	for i, r := range a.Runs {
		c := b.Runs[i].Config
		if r.ID != b.Runs[i].ID || c.Iters < r.Config.Iters {
			return false
		}
		c.Iters = r.Config.Iters
		if config.Diff(r.Config, c) != nil {
			return false
		}
	}
	return true
}

func describeChange(a, b Manifest) string {
	if len(a.Runs) != len(b.Runs) {
		return fmt.Sprintf("%d runs there, %d planned now", len(a.Runs), len(b.Runs))
	}
	for i := range a.Runs {
		if a.Runs[i].ID != b.Runs[i].ID {
			return fmt.Sprintf("run %d is %s there, %s now", i, a.Runs[i].ID, b.Runs[i].ID)
		}
		if d := config.Diff(a.Runs[i].Config, b.Runs[i].Config); d != nil {
			return fmt.Sprintf("run %d (%s): %s", i, a.Runs[i].ID, strings.Join(d, ", "))
		}
	}
	return "the name differs"
}

// Load reads dir/manifest.json.
func Load(dir string) (Manifest, error) {
	path := filepath.Join(dir, ManifestFile)
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Manifest{}, fmt.Errorf("sweep: %s has no %s: plan the sweep first (pcl sweep plan --out %s ...)", dir, ManifestFile, dir)
		}
		return Manifest{}, fmt.Errorf("sweep: %w", err)
	}
	return decode(b, path)
}

func decode(b []byte, path string) (Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("sweep: decode %s: %w", path, err)
	}
	if m.Version != version {
		return Manifest{}, fmt.Errorf("sweep: %s has version %d, this program reads %d", path, m.Version, version)
	}
	for i, r := range m.Runs {
		if r.Index != i {
			return Manifest{}, fmt.Errorf("sweep: %s: run %d has index %d", path, i, r.Index)
		}
		if err := r.Config.Validate(); err != nil {
			return Manifest{}, fmt.Errorf("sweep: %s: run %d (%s): %w", path, i, r.ID, err)
		}
	}
	return m, nil
}

// RunDir is the directory of run r under the sweep directory.
func RunDir(dir string, r Run) string { return filepath.Join(dir, RunsDir, r.ID) }

// IndexEnv are the environment variables an index is taken from, in order: a Slurm array task's,
// then a Kubernetes Indexed Job's.
func IndexEnv() []string { return []string{"SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"} }

// ResolveIndex returns the run index: flag when it is >= 0, else the first of IndexEnv that is
// set (looked up with getenv), else an error. offset is added to an index from the environment
// (Slurm arrays are capped in size, so a large sweep is split into arrays at offsets). The index
// is checked against n runs.
func ResolveIndex(flag, offset, n int, getenv func(string) string) (int, error) {
	i, from := flag, "--index"
	if i < 0 {
		from = ""
		for _, name := range IndexEnv() {
			if v := getenv(name); v != "" {
				x, err := strconv.Atoi(strings.TrimSpace(v))
				if err != nil {
					return 0, fmt.Errorf("sweep: %s = %q is not an index", name, v)
				}
				i, from = x+offset, name
				if offset != 0 {
					from += fmt.Sprintf(" + offset %d", offset)
				}
				break
			}
		}
		if from == "" {
			return 0, fmt.Errorf("sweep: no run index: give --index, or run under a Slurm array (%s) or a Kubernetes Indexed Job (%s)", IndexEnv()[0], IndexEnv()[1])
		}
	}
	if i < 0 || i >= n {
		return 0, fmt.Errorf("sweep: run index %d (from %s) is out of range: the manifest has %d runs, indices 0..%d", i, from, n, n-1)
	}
	return i, nil
}
