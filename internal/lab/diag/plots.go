package diag

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
	"github.com/sparsepcl/sparsepcl/internal/lab/plot"
)

// Table is a probe CSV read back: one column of numbers per header name.
type Table map[string][]float64

// ReadCSV reads a probe CSV written by Probe.
func ReadCSV(path string) (Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("diag: %w", err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("diag: %s: %w", path, err)
	}
	if len(recs) < 1 {
		return nil, fmt.Errorf("diag: %s is empty", path)
	}
	head := recs[0]
	t := Table{}
	for i, rec := range recs[1:] {
		if len(rec) != len(head) {
			return nil, fmt.Errorf("diag: %s line %d: %d fields, header has %d", path, i+2, len(rec), len(head))
		}
		for j, v := range rec {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, fmt.Errorf("diag: %s line %d column %s: %w", path, i+2, head[j], err)
			}
			t[head[j]] = append(t[head[j]], x)
		}
	}
	return t, nil
}

// Overlay draws metric against iteration for each named table into path. Non-finite values are
// left out.
func Overlay(path, title, metric string, names []string, tables []Table) error {
	if len(names) != len(tables) {
		return fmt.Errorf("diag: %d names for %d tables", len(names), len(tables))
	}
	var series []plot.Series
	for i, t := range tables {
		ys, ok := t[metric]
		if !ok {
			return fmt.Errorf("diag: no column %q", metric)
		}
		s := plot.Series{Name: names[i]}
		for j, y := range ys {
			if !math.IsNaN(y) && !math.IsInf(y, 0) {
				s.X = append(s.X, t["iteration"][j])
				s.Y = append(s.Y, y)
			}
		}
		series = append(series, s)
	}
	return plot.Lines(path, title, "iteration", metric, series, nil)
}

// Panels writes one PNG per group of related measures of a single probe into dir. The probe's
// config.json in dir, when there is one, names the run on every title.
func Panels(dir string, t Table) error {
	run, err := probeRun(dir)
	if err != nil {
		return err
	}
	groups := []struct {
		file, title string
		cols        []string
	}{
		{"reward.png", "reward", []string{"mean_reward", "rewarded", "curriculum"}},
		{"writing.png", "writing at states where a symbol is due", []string{"write_frac", "p_write", "p_correct", "p_correct_given_write", "correct_in_support"}},
		{"support.png", "policy support and peak", []string{"support", "max_prob"}},
		{"symbols.png", "symbols whose correct write is in the support", []string{"symbols_in_support"}},
		{"gap.png", "G(z) - z of the correct write, when outside the support", []string{"correct_gap"}},
		{"logits.png", "logit scale", []string{"logit_std", "logit_range"}},
		{"terms.png", "per-step terms at taken actions", []string{"v", "term_policy", "term_lambda", "term_big_lambda", "lambda_scale"}},
		{"weights.png", "loss weight dL/dc per taken action (>0 reinforces)", []string{"adv_correct", "adv_wrong", "adv_nowrite", "replay_adv_correct", "replay_adv_wrong"}},
		{"replay.png", "rewarded share of the replay batch", []string{"replay_batch_rewarded"}},
		{"grads.png", "share of the squared gradient norm", []string{"grad_logits", "grad_value", "grad_multipliers", "grad_body"}},
	}
	for _, g := range groups {
		var names []string
		var tabs []Table
		for _, c := range g.cols {
			names = append(names, c)
			tabs = append(tabs, Table{"iteration": t["iteration"], c: t[c]})
		}
		var series []plot.Series
		for i, c := range g.cols {
			s := plot.Series{Name: names[i]}
			for j, y := range tabs[i][c] {
				if !math.IsNaN(y) && !math.IsInf(y, 0) {
					s.X = append(s.X, t["iteration"][j])
					s.Y = append(s.Y, y)
				}
			}
			series = append(series, s)
		}
		title := g.title
		if run != "" {
			title = run + "\n" + g.title
		}
		if err := plot.Lines(filepath.Join(dir, g.file), title, "iteration", "", series, nil); err != nil {
			return err
		}
	}
	return nil
}

// probeRun names the run of the probe in dir from its config.json: env, |A| and base, algorithm
// and weight, seed; "" when dir has no config.json.
func probeRun(dir string) (string, error) {
	cfg, err := runstore.Dir(dir).Config()
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("diag: %w", err)
	}
	actions := 0
	if task, err := algorithmic.TaskByID(cfg.Env); err == nil {
		actions = task.Moves() * 2 * cfg.Base
	}
	return fmt.Sprintf("%s %s, %s, seed %d", cfg.Env, plot.SizeLabel(actions, cfg.Base, 0), plot.AlgoLabel(cfg.Algo, cfg.Alpha, cfg.TsallisQ), cfg.Seed), nil
}
