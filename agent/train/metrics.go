package train

import (
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
	GreedyReward float64 // mean total reward of the greedy evaluation episodes
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

// ReadMetrics parses a metrics.csv file.
func ReadMetrics(path string) ([]Row, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("metrics: %s: %w", path, err)
	}
	if len(recs) == 0 || len(recs[0]) != len(header) || recs[0][0] != header[0] {
		return nil, fmt.Errorf("metrics: %s: missing or unexpected header", path)
	}
	rows := make([]Row, 0, len(recs)-1)
	for i, rec := range recs[1:] {
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
				return nil, fmt.Errorf("metrics: %s line %d column %s: %w", path, i+2, header[j], e)
			}
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

// openMetrics creates path with the given existing rows (kept on resume) and returns an appender.
func openMetrics(path string, keep []Row) (*metricsWriter, error) {
	fh, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	if err := WriteMetrics(fh, keep); err != nil {
		fh.Close()
		return nil, fmt.Errorf("metrics: %s: %w", path, err)
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
