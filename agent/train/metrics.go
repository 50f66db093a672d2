package train

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
)

// Row is one line of metrics.csv. GreedyReward is NaN on iterations without a greedy evaluation.
type Row struct {
	Iteration    int
	EnvSteps     int64
	WallSeconds  float64
	MeanReward   float64 // mean total reward of the fresh (stochastic) episodes
	GreedyReward float64 // mean total reward of the greedy evaluation episodes, played at the training curriculum's current length
	Loss         float64 // on-policy step loss
	ReplayLoss   float64 // replay step loss (NaN without replay)
	Support      float64 // mean policy support size over visited states
	MaxProb      float64 // mean probability of the most likely action over visited states
	Curriculum   int     // current curriculum minimum length of the training env (0: unknown)
	GradNorm     float64
}

var header = []string{"iteration", "env_steps", "wall_seconds", "mean_reward", "greedy_reward", "loss", "replay_loss", "support_size", "max_prob", "curriculum_length", "grad_norm"}

func f(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func (r Row) record() []string {
	return []string{strconv.Itoa(r.Iteration), strconv.FormatInt(r.EnvSteps, 10), f(r.WallSeconds), f(r.MeanReward),
		f(r.GreedyReward), f(r.Loss), f(r.ReplayLoss), f(r.Support), f(r.MaxProb), strconv.Itoa(r.Curriculum), f(r.GradNorm)}
}

// parseRow parses one metrics.csv record; line is its line number for errors.
func parseRow(rec []string, path string, line int) (Row, error) {
	if len(rec) != len(header) {
		return Row{}, fmt.Errorf("metrics: %s line %d: %d columns, want %d", path, line, len(rec), len(header))
	}
	var r Row
	var errs [11]error
	r.Iteration, errs[0] = strconv.Atoi(rec[0])
	r.EnvSteps, errs[1] = strconv.ParseInt(rec[1], 10, 64)
	r.WallSeconds, errs[2] = strconv.ParseFloat(rec[2], 64)
	r.MeanReward, errs[3] = strconv.ParseFloat(rec[3], 64)
	r.GreedyReward, errs[4] = strconv.ParseFloat(rec[4], 64)
	r.Loss, errs[5] = strconv.ParseFloat(rec[5], 64)
	r.ReplayLoss, errs[6] = strconv.ParseFloat(rec[6], 64)
	r.Support, errs[7] = strconv.ParseFloat(rec[7], 64)
	r.MaxProb, errs[8] = strconv.ParseFloat(rec[8], 64)
	r.Curriculum, errs[9] = strconv.Atoi(rec[9])
	r.GradNorm, errs[10] = strconv.ParseFloat(rec[10], 64)
	for j, e := range errs {
		if e != nil {
			return Row{}, fmt.Errorf("metrics: %s line %d column %s: %w", path, line, header[j], e)
		}
	}
	return r, nil
}

// checkHeader verifies the first record of a metrics file.
func checkHeader(rec []string, path string) error {
	if len(rec) != len(header) || rec[0] != header[0] {
		return fmt.Errorf("metrics: %s: missing or unexpected header", path)
	}
	return nil
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
	if err := checkHeader(recs[0], path); err != nil {
		return nil, err
	}
	rows := make([]Row, 0, len(recs)-1)
	for i, rec := range recs[1:] {
		r, err := parseRow(rec, path, i+2)
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

// metricsWriter appends rows to metrics.csv, flushing every row so a crash loses nothing.
type metricsWriter struct {
	fh *os.File
	cw *csv.Writer
}

// openMetrics creates path with the header and returns an appender.
func openMetrics(path string) (*metricsWriter, error) {
	fh, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	if err := WriteMetrics(fh, nil); err != nil {
		fh.Close()
		return nil, fmt.Errorf("metrics: %s: %w", path, err)
	}
	return &metricsWriter{fh: fh, cw: csv.NewWriter(fh)}, nil
}

// resumeMetrics opens an existing metrics file for appending the rows of iteration before and on.
// The rows of earlier iterations are kept in place (and returned); rows of iteration >= before,
// written after the checkpoint that the run resumes from, are cut off, as is a torn last line (a
// crash in mid-write). dropped counts the rows cut off.
func resumeMetrics(path string, before int) (mw *metricsWriter, kept []Row, dropped int, err error) {
	sc, err := scanMetrics(path, before)
	if err != nil {
		return nil, nil, 0, err
	}
	if mw, err = sc.open(); err != nil {
		return nil, nil, 0, err
	}
	return mw, sc.kept, sc.dropped, nil
}

// metricsScan is a metrics file checked for resuming before an iteration, not yet changed.
type metricsScan struct {
	path       string
	kept       []Row // the rows of the iterations before
	cut, total int64 // where the kept rows end, and the file's size
	dropped    int   // rows after the kept ones (and a torn last line)
}

// scanMetrics checks that path holds a row for every iteration before before (and finds the rows
// after them) without changing the file, so that a resume can refuse to start having changed nothing.
func scanMetrics(path string, before int) (metricsScan, error) {
	sc := metricsScan{path: path}
	if before < 0 {
		return sc, fmt.Errorf("metrics: %s: the checkpoint claims %d iterations: damaged metadata, nothing changed", path, before)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return sc, fmt.Errorf("metrics: %w", err)
	}
	sc.total = int64(len(data))
	if i := bytes.LastIndexByte(data, '\n'); i+1 < len(data) {
		data, sc.dropped = data[:i+1], 1 // a torn last line
	}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	rec, err := cr.Read()
	if err != nil {
		return sc, fmt.Errorf("metrics: %s: missing or unexpected header", path)
	}
	if err := checkHeader(rec, path); err != nil {
		return sc, err
	}
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
		r, err := parseRow(rec, path, line)
		if err != nil {
			return sc, err
		}
		if r.Iteration >= before {
			for {
				if _, err := cr.Read(); err != nil {
					break
				}
				sc.dropped++
			}
			sc.dropped++
			sc.cut = start
			break
		}
		if r.Iteration != len(sc.kept) {
			return sc, fmt.Errorf("metrics: %s line %d: iteration %d, want %d: the rows are out of order, nothing changed", path, line, r.Iteration, len(sc.kept))
		}
		sc.kept = append(sc.kept, r)
		sc.cut = cr.InputOffset()
	}
	if len(sc.kept) < before {
		return sc, fmt.Errorf("metrics: %s holds %d rows but the checkpoint claims %d iterations: one of the two is damaged, nothing changed", path, len(sc.kept), before)
	}
	return sc, nil
}

// open cuts the rows after the kept ones off the file and returns an appender after them.
func (sc metricsScan) open() (*metricsWriter, error) {
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
	return &metricsWriter{fh: fh, cw: csv.NewWriter(fh)}, nil
}

func (m *metricsWriter) write(r Row) error {
	if err := m.cw.Write(r.record()); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	m.cw.Flush()
	return m.cw.Error()
}

func (m *metricsWriter) Close() error { return m.fh.Close() }

// FirstReach returns the first row whose greedy reward is >= threshold, or false.
func FirstReach(rows []Row, threshold float64) (Row, bool) {
	for _, r := range rows {
		if !math.IsNaN(r.GreedyReward) && r.GreedyReward >= threshold {
			return r, true
		}
	}
	return Row{}, false
}
