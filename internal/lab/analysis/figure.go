package analysis

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sparsepcl/sparsepcl/internal/lab/plot"
)

// KindPanels is a figure rather than a table: one panel per FigureSpec panel, each arm a band
// (the mean over its seeds and their min-max range) of one curve over env steps, as the paper's
// max-prob panels set algorithms side by side per action grid. pcl tables writes the PNG to
// FigureSpec.Path and, between the markers, the image link with a caption that says how many seeds
// and env steps each band holds, so that a figure of runs still in progress says so.
const KindPanels = "panels"

// FigureSpec is a KindPanels figure: the PNG's path (relative to the root), the curve every panel
// draws (a report figure's suffix: "maxprob", "return", "clip" or "alpha"), the title, the y
// axis's label (the report figure's when empty: a panel's axis is shorter, and the caption says
// what the curve is) and the panels in order, three to a row.
type FigureSpec struct {
	Path   string      `json:"path"`
	Curve  string      `json:"curve"`
	Title  string      `json:"title"`
	YLabel string      `json:"y_label,omitempty"`
	Panels []PanelSpec `json:"panels"`
}

// PanelSpec is one panel: its title and its arms, a band each.
type PanelSpec struct {
	Title string    `json:"title"`
	Arms  []ArmSpec `json:"arms"`
}

// Figure is a rendered KindPanels spec: the markdown between its markers and the PNG.
type Figure struct {
	Text string
	PNG  []byte
}

// figureCurve is the report's curve named suffix, when a panel can draw it (one band per arm: not
// the value figure, whose panels hold a band per target too).
func figureCurve(suffix string) (curveFigure, error) {
	var names []string
	for _, f := range curveFigures() {
		if len(f.extra) > 0 {
			continue
		}
		if f.suffix == suffix {
			return f, nil
		}
		names = append(names, f.suffix)
	}
	return curveFigure{}, fmt.Errorf("curve %q is not one of %s", suffix, strings.Join(names, ", "))
}

// validateFigure checks a KindPanels spec's figure before any run is read.
func validateFigure(s TableSpec) error {
	f := s.Figure
	if f == nil || f.Path == "" || len(f.Panels) == 0 {
		return errors.New("a panels table needs a figure with a path and panels")
	}
	if filepath.Ext(f.Path) != ".png" {
		return fmt.Errorf("the figure's path %q does not end in .png", f.Path)
	}
	if _, err := figureCurve(f.Curve); err != nil {
		return err
	}
	for _, p := range f.Panels {
		if len(p.Arms) == 0 {
			return fmt.Errorf("panel %q has no arms", p.Title)
		}
	}
	return nil
}

// RenderFigure draws the KindPanels spec from the runs under root: the PNG, and the markdown that
// links it from spec.File with its caption.
func RenderFigure(root string, spec TableSpec) (Figure, error) {
	if err := validateFigure(spec); err != nil {
		return Figure{}, fmt.Errorf("tables: %s: %w", spec.Name, err)
	}
	f := spec.Figure
	curve, _ := figureCurve(f.Curve) // checked above
	var rows [][]plot.Panel
	var captions []string
	for _, p := range f.Panels {
		recs := make([][]Record, len(p.Arms))
		var all []Record
		for i, a := range p.Arms {
			dirs, err := a.Dirs(root)
			if err != nil {
				return Figure{}, fmt.Errorf("tables: %s: panel %q: %w", spec.Name, p.Title, err)
			}
			if recs[i], err = LoadRecords(dirs); err != nil {
				return Figure{}, fmt.Errorf("tables: %s: panel %q: arm %q: %w", spec.Name, p.Title, a.Label, err)
			}
			all = append(all, recs[i]...)
		}
		width := bucketWidth(all)
		colours := Palette{}
		panel := plot.Panel{Title: p.Title}
		var arms []string
		for i, a := range p.Arms {
			b := curveBand(recs[i], curve.value, width)
			if len(b.X) == 0 {
				return Figure{}, fmt.Errorf("tables: %s: panel %q: arm %q: no run recorded the %s curve", spec.Name, p.Title, a.Label, f.Curve)
			}
			b.Name, b.Colour = fmt.Sprintf("%s (%s)", a.Label, seedCount(len(recs[i]))), colours.Next(recs[i][0].Cfg.Algo)
			panel.Bands = append(panel.Bands, b)
			arms = append(arms, fmt.Sprintf("%s, %s", a.Label, stepsReached(recs[i])))
		}
		captions = append(captions, fmt.Sprintf("%s: %s", p.Title, strings.Join(arms, "; ")))
		if len(rows) == 0 || len(rows[len(rows)-1]) == 3 {
			rows = append(rows, nil)
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], panel)
	}
	yLabel := cmp.Or(f.YLabel, curve.y)
	png, err := plot.GridPNG(f.Title, "env steps", yLabel, rows)
	if err != nil {
		return Figure{}, fmt.Errorf("tables: %s: %w", spec.Name, err)
	}
	link, err := filepath.Rel(filepath.Dir(spec.File), f.Path)
	if err != nil {
		return Figure{}, fmt.Errorf("tables: %s: %w", spec.Name, err)
	}
	text := fmt.Sprintf("![%s](%s)\n\n%s. Each band: the mean over the seeds of the %s, with their min-max range. Drawn from the runs by `pcl tables`.\n",
		strings.ReplaceAll(f.Title, "\n", " "), filepath.ToSlash(link), strings.Join(captions, ". "), curve.what)
	return Figure{Text: text, PNG: png}, nil
}

// stepsReached is "n seeds at S env steps" (or "at S1-S2 env steps" when the runs differ).
func stepsReached(runs []Record) string {
	var steps []int64
	for _, r := range runs {
		if n := len(r.Rows); n > 0 {
			steps = append(steps, r.Rows[n-1].EnvSteps)
		}
	}
	if len(steps) == 0 {
		return seedCount(len(runs)) + ", no rows"
	}
	lo, hi := slices.Min(steps), slices.Max(steps)
	at := thousands(float64(lo))
	if lo != hi {
		at += "-" + thousands(float64(hi))
	}
	return fmt.Sprintf("%s at %s env steps", seedCount(len(runs)), at)
}
