package runstore

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/sparsepcl/sparsepcl/agent/atomicfile"
)

// Row is one line of metrics.csv. GreedyReward is NaN on iterations without a greedy evaluation.
// Every column of row i describes the networks before iteration i's training step (row 0: the
// initialised networks): the episodes and the max-prob window were sampled by them, the greedy
// evaluation plays them, and the loss and diagnostics are computed in the step's forward pass.
type Row struct {
	Iteration    int
	EnvSteps     int64
	WallSeconds  float64
	MeanReward   float64 // mean total reward of the fresh (stochastic) episodes
	GreedyReward float64 // mean total reward of the greedy evaluation episodes, played at the training curriculum's current length
	Loss         float64 // the on-policy step's loss (the replay steps' mean loss in a run without one)
	ReplayLoss   float64 // replay step loss (NaN without replay)
	Support      float64 // mean policy support size over visited states
	MaxProb      float64 // mean probability of the most likely action over visited states
	Curriculum   int     // current curriculum minimum length of the training env (0: unknown)
	// GradNorm is a global gradient norm before clipping: of the on-policy step on the episode
	// runs (the algorithmic tasks, which always take one), and the mean over the iteration's
	// replay steps on the long-episode runs (HalfCheetah), whose steps are mostly replay steps.
	GradNorm float64
	Diagnostics
	Alpha float64 // the regularisation weight of this iteration's training steps (NaN in files written before it)
}

// Diagnostics are the value and gradient measurements of a training step (NaN where a run
// family does not measure them: the LSTM runs of the algorithmic tasks leave them NaN).
type Diagnostics struct {
	// ValueMean is the mean V over the batch's states whose discounted return is known, and
	// ReturnDiscounted the mean empirical discounted return from those same states (NaN when the
	// batch holds none): the critic's scale against the target it should reach.
	ValueMean        float64
	ReturnDiscounted float64
	// RegTerm is the mean per-step regularisation term at those states: what the consistency adds
	// to each reward (for a steady policy V is about ReturnDiscounted + RegTerm/(1-γ)).
	RegTerm float64
	// ClipScale is the factor the global-norm clip applied to the gradient (1 when it did not bind).
	ClipScale float64
	// GradNormPolicy and GradNormValue split GradNorm between the policy network (with its
	// multiplier heads) and the value network (0 in the unified form, which has none).
	GradNormPolicy float64
	GradNormValue  float64
}

// NoDiagnostics is a Diagnostics with every field NaN.
func NoDiagnostics() Diagnostics {
	n := math.NaN()
	return Diagnostics{ValueMean: n, ReturnDiscounted: n, RegTerm: n, ClipScale: n, GradNormPolicy: n, GradNormValue: n}
}

var header = []string{"iteration", "env_steps", "wall_seconds", "mean_reward", "greedy_reward", "loss", "replay_loss", "support_size",
	"max_prob", "curriculum_length", "grad_norm", "value_mean", "return_discounted", "reg_term", "clip_scale", "grad_norm_policy", "grad_norm_value", "alpha"}

// requiredColumns are the columns every metrics file has had; the later ones (the diagnostics)
// may be missing from files written before them, and read as NaN.
const requiredColumns = 11

func f(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func (r Row) record() []string {
	d := r.Diagnostics
	return []string{strconv.Itoa(r.Iteration), strconv.FormatInt(r.EnvSteps, 10), f(r.WallSeconds), f(r.MeanReward),
		f(r.GreedyReward), f(r.Loss), f(r.ReplayLoss), f(r.Support), f(r.MaxProb), strconv.Itoa(r.Curriculum), f(r.GradNorm),
		f(d.ValueMean), f(d.ReturnDiscounted), f(d.RegTerm), f(d.ClipScale), f(d.GradNormPolicy), f(d.GradNormValue), f(r.Alpha)}
}

// layout maps each column of a metrics file to its index in header.
type layout []int

// current reports whether the file's columns are header's, in order.
func (l layout) current() bool {
	if len(l) != len(header) {
		return false
	}
	for j, i := range l {
		if i != j {
			return false
		}
	}
	return true
}

// parseRow parses one metrics.csv record of the file's layout; line is its line number for errors.
// Columns the layout lacks are NaN.
func parseRow(rec []string, lay layout, path string, line int) (Row, error) {
	if len(rec) != len(lay) {
		return Row{}, fmt.Errorf("metrics: %s line %d: %d columns, want %d", path, line, len(rec), len(lay))
	}
	r := Row{Diagnostics: NoDiagnostics(), Alpha: math.NaN()}
	floats := [...]*float64{2: &r.WallSeconds, 3: &r.MeanReward, 4: &r.GreedyReward, 5: &r.Loss, 6: &r.ReplayLoss, 7: &r.Support,
		8: &r.MaxProb, 10: &r.GradNorm, 11: &r.ValueMean, 12: &r.ReturnDiscounted, 13: &r.RegTerm, 14: &r.ClipScale,
		15: &r.GradNormPolicy, 16: &r.GradNormValue, 17: &r.Alpha}
	for j, i := range lay {
		var err error
		switch i {
		case 0:
			r.Iteration, err = strconv.Atoi(rec[j])
		case 1:
			r.EnvSteps, err = strconv.ParseInt(rec[j], 10, 64)
		case 9:
			r.Curriculum, err = strconv.Atoi(rec[j])
		default:
			*floats[i], err = strconv.ParseFloat(rec[j], 64)
		}
		if err != nil {
			return Row{}, fmt.Errorf("metrics: %s line %d column %s: %w", path, line, header[i], err)
		}
	}
	return r, nil
}

// checkHeader verifies the first record of a metrics file and returns its layout: its columns,
// each a column of header, with the required ones present and the first of them first.
func checkHeader(rec []string, path string) (layout, error) {
	bad := fmt.Errorf("metrics: %s: missing or unexpected header", path)
	if len(rec) == 0 || rec[0] != header[0] {
		return nil, bad
	}
	lay := make(layout, len(rec))
	seen := map[int]bool{}
	for j, name := range rec {
		i := slices.Index(header, name)
		if i < 0 || seen[i] {
			return nil, bad
		}
		lay[j], seen[i] = i, true
	}
	for i := range requiredColumns {
		if !seen[i] {
			return nil, bad
		}
	}
	return lay, nil
}

// ReadMetrics parses a metrics.csv file.
func ReadMetrics(path string) ([]Row, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	defer fh.Close()
	cr := csv.NewReader(fh)
	cr.FieldsPerRecord = -1 // counted by parseRow, with the line number
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("metrics: %s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("metrics: %s: missing or unexpected header", path)
	}
	lay, err := checkHeader(recs[0], path)
	if err != nil {
		return nil, err
	}
	rows := make([]Row, 0, len(recs)-1)
	for i, rec := range recs[1:] {
		r, err := parseRow(rec, lay, path, i+2)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// WriteMetrics writes rows (with the header) to w.
func WriteMetrics(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, r := range rows {
		if err := cw.Write(r.record()); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Writer appends a run's rows to its metrics.csv, flushing every row so that a crash loses
// nothing, and to its TensorBoard events once StartTensorBoard has opened them. It holds the run
// directory's lock until Close.
type Writer struct {
	dir  Dir
	fh   *os.File
	cw   *csv.Writer
	tb   *tboard // TensorBoard copy of every row (nil: none)
	lock *Lock
}

// CreateMetrics creates the run's metrics.csv with the header and returns its appender, which
// holds lock from then on (on an error the caller still holds it).
func (d Dir) CreateMetrics(lock *Lock) (*Writer, error) {
	path := d.File(MetricsFile)
	fh, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	if err := WriteMetrics(fh, nil); err != nil {
		fh.Close()
		return nil, fmt.Errorf("metrics: %s: %w", path, err)
	}
	return &Writer{dir: d, fh: fh, cw: csv.NewWriter(fh), lock: lock}, nil
}

// MetricsScan is a metrics file checked for resuming before an iteration, not yet changed.
type MetricsScan struct {
	dir        Dir
	path       string
	Kept       []Row // the rows of the iterations before
	cut, total int64 // where the kept rows end, and the file's size
	Dropped    int   // rows after the kept ones (and a torn last line)
	legacy     bool  // the file has an earlier layout: open rewrites it in the current one
}

// ScanMetrics checks that the run's metrics.csv holds a row for every iteration before before
// (and finds the rows after them, written after the checkpoint that the run resumes from, and a
// torn last line) without changing the file, so that a resume can refuse to start having changed
// nothing. Open then cuts those rows off.
func (d Dir) ScanMetrics(before int) (MetricsScan, error) {
	sc, err := scanMetrics(d.File(MetricsFile), before)
	sc.dir = d
	return sc, err
}

// scanMetrics is ScanMetrics of the metrics file at path.
func scanMetrics(path string, before int) (MetricsScan, error) {
	sc := MetricsScan{path: path}
	if before < 0 {
		return sc, fmt.Errorf("metrics: %s: the checkpoint claims %d iterations: damaged metadata, nothing changed", path, before)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return sc, fmt.Errorf("metrics: %w", err)
	}
	sc.total = int64(len(data))
	if i := bytes.LastIndexByte(data, '\n'); i+1 < len(data) {
		data, sc.Dropped = data[:i+1], 1 // a torn last line
	}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	rec, err := cr.Read()
	if err != nil {
		return sc, fmt.Errorf("metrics: %s: missing or unexpected header", path)
	}
	lay, err := checkHeader(rec, path)
	if err != nil {
		return sc, err
	}
	sc.legacy = !lay.current()
	sc.cut = cr.InputOffset()
	for line := 2; ; line++ {
		start := cr.InputOffset()
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return sc, fmt.Errorf("metrics: %s line %d: %w", path, line, err)
		}
		r, err := parseRow(rec, lay, path, line)
		if err != nil {
			return sc, err
		}
		if r.Iteration >= before {
			for {
				if _, err := cr.Read(); err != nil {
					break
				}
				sc.Dropped++
			}
			sc.Dropped++
			sc.cut = start
			break
		}
		if r.Iteration != len(sc.Kept) {
			return sc, fmt.Errorf("metrics: %s line %d: iteration %d, want %d: the rows are out of order, nothing changed", path, line, r.Iteration, len(sc.Kept))
		}
		sc.Kept = append(sc.Kept, r)
		sc.cut = cr.InputOffset()
	}
	if len(sc.Kept) < before {
		return sc, fmt.Errorf("metrics: %s holds %d rows but the checkpoint claims %d iterations: one of the two is damaged, nothing changed", path, len(sc.Kept), before)
	}
	return sc, nil
}

// Open cuts the rows after the kept ones off the file and returns an appender after them, which
// holds lock from then on (on an error the caller still holds it). A file of an earlier layout is
// first replaced, atomically, by the kept rows in the current layout.
func (sc MetricsScan) Open(lock *Lock) (*Writer, error) {
	fh, err := sc.open()
	if err != nil {
		return nil, err
	}
	return &Writer{dir: sc.dir, fh: fh, cw: csv.NewWriter(fh), lock: lock}, nil
}

// open is Open's file, positioned after the kept rows.
func (sc MetricsScan) open() (*os.File, error) {
	if sc.legacy {
		if err := atomicfile.Write(sc.path, 0o644, func(w io.Writer) error { return WriteMetrics(w, sc.Kept) }); err != nil {
			return nil, fmt.Errorf("metrics: %s: rewrite in the current layout: %w", sc.path, err)
		}
		fh, err := os.OpenFile(sc.path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
		return fh, nil
	}
	fh, err := os.OpenFile(sc.path, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	if sc.cut < sc.total {
		if err := fh.Truncate(sc.cut); err != nil {
			fh.Close()
			return nil, fmt.Errorf("metrics: %s: cut rows after the checkpoint: %w", sc.path, err)
		}
	}
	if _, err := fh.Seek(sc.cut, io.SeekStart); err != nil {
		fh.Close()
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return fh, nil
}

// StartTensorBoard opens a new event file in the run directory for a process starting (or
// resuming) at iteration from, after config.json and run.json are written: it records them.
func (m *Writer) StartTensorBoard(from int) error {
	tb, err := openTBoard(string(m.dir), from)
	if err != nil {
		return err
	}
	m.tb = tb
	return nil
}

// Write appends r.
func (m *Writer) Write(r Row) error {
	rec := r.record()
	if err := m.cw.Write(rec); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	m.cw.Flush()
	if err := m.cw.Error(); err != nil {
		return err
	}
	return m.tb.row(header, rec)
}

// Close closes the files and releases the lock.
func (m *Writer) Close() error {
	return errors.Join(m.fh.Close(), m.tb.Close(), m.lock.Close())
}

// FirstReach returns the first row whose greedy reward is >= threshold, or false.
func FirstReach(rows []Row, threshold float64) (Row, bool) {
	for _, r := range rows {
		if !math.IsNaN(r.GreedyReward) && r.GreedyReward >= threshold {
			return r, true
		}
	}
	return Row{}, false
}
