package runstore

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sparsepcl/sparsepcl/agent/internal/tfevents"
)

// TensorBoard event files: every process that trains a run writes one into the run directory,
// holding each metrics.csv row as scalars tagged "metrics/<column>" at step = iteration (NaN cells,
// e.g. greedy_reward between evaluations, are left out), and config.json and run.json as text
// (tags "config" and "run").
// A resumed process starts its file with a SessionLog START at the iteration it resumes from, so
// that TensorBoard drops the rows the earlier process wrote from there on (metrics.csv drops them
// too, and they are recomputed).

// TBTagPrefix starts the tag of every metrics scalar in the event files.
const TBTagPrefix = "metrics/"

// tboard mirrors metrics rows into an event file. A nil *tboard does nothing.
type tboard struct {
	w    *tfevents.Writer
	tags []string // TBTagPrefix + column, cached for the header seen last
	head []string
}

// openTBoard creates a new event file in dir for a process starting (or resuming) at iteration
// from, and records the run's config.json in it.
func openTBoard(dir string, from int) (*tboard, error) {
	w, err := tfevents.Create(dir, tfevents.Options{})
	if err != nil {
		return nil, fmt.Errorf("tensorboard: %w", err)
	}
	t := &tboard{w: w}
	if err := w.SessionStart(int64(from)); err != nil {
		t.Close()
		return nil, fmt.Errorf("tensorboard: %w", err)
	}
	for _, f := range []struct{ tag, name string }{{"config", ConfigFile}, {"run", ProvenanceFile}} {
		data, err := os.ReadFile(filepath.Join(dir, f.name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err == nil {
			err = w.Text(int64(from), f.tag, codeBlock(string(data)))
		}
		if err != nil {
			t.Close()
			return nil, fmt.Errorf("tensorboard: %s: %w", f.name, err)
		}
	}
	return t, nil
}

// codeBlock indents text by four spaces: a Markdown code block, as the text plugin renders it.
func codeBlock(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return "    " + strings.Join(lines, "\n    ")
}

// row writes one metrics record, whose first column is the iteration.
func (t *tboard) row(header, rec []string) error {
	if t == nil {
		return nil
	}
	if len(rec) != len(header) || len(rec) == 0 {
		return fmt.Errorf("tensorboard: %d cells for %d columns", len(rec), len(header))
	}
	step, err := strconv.ParseInt(rec[0], 10, 64)
	if err != nil {
		return fmt.Errorf("tensorboard: %s %q: %w", header[0], rec[0], err)
	}
	if !slices.Equal(t.head, header) {
		t.head = header
		t.tags = make([]string, len(header))
		for i, h := range header {
			t.tags[i] = TBTagPrefix + h
		}
	}
	tags := make([]string, 0, len(rec)-1)
	vals := make([]float64, 0, len(rec)-1)
	for i := 1; i < len(rec); i++ {
		x, err := strconv.ParseFloat(rec[i], 64)
		if err != nil {
			return fmt.Errorf("tensorboard: %s %q: %w", header[i], rec[i], err)
		}
		if !math.IsNaN(x) {
			tags, vals = append(tags, t.tags[i]), append(vals, x)
		}
	}
	if err := t.w.Scalars(step, tags, vals); err != nil {
		return fmt.Errorf("tensorboard: %w", err)
	}
	return nil
}

// Close closes the event file.
func (t *tboard) Close() error {
	if t == nil {
		return nil
	}
	return t.w.Close()
}
