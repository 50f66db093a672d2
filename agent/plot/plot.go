// Package plot draws the PNG figures of training runs with gonum.org/v1/plot: curves of one
// quantity against iterations, one line per series (Lines), or a mean line over a translucent
// min-max band per group of runs (Bands). Figures are written atomically.
package plot

import (
	"fmt"
	"image/color"
	"io"

	"github.com/sparsepcl/sparsepcl/internal/atomicfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Series is one named curve.
type Series struct {
	Name string
	X, Y []float64
}

var palette = []color.RGBA{
	{R: 0x1f, G: 0x77, B: 0xb4, A: 255}, {R: 0xd6, G: 0x27, B: 0x28, A: 255}, {R: 0x2c, G: 0xa0, B: 0x2c, A: 255},
	{R: 0xff, G: 0x7f, B: 0x0e, A: 255}, {R: 0x94, G: 0x67, B: 0xbd, A: 255}, {R: 0x8c, G: 0x56, B: 0x4b, A: 255},
}

// Lines writes a PNG of the series to path (atomically: temp file + rename). Series with no points
// are skipped; colours repeat after six series unless colorOf maps a series to a palette index.
func Lines(path, title, xLabel, yLabel string, series []Series, colorOf func(i int) int) error {
	p := newPlot(title, xLabel, yLabel)
	for i, s := range series {
		if len(s.X) == 0 {
			continue
		}
		if len(s.X) != len(s.Y) {
			return fmt.Errorf("plot: series %q has %d x and %d y values", s.Name, len(s.X), len(s.Y))
		}
		pts := make(plotter.XYs, len(s.X))
		for j := range s.X {
			pts[j].X, pts[j].Y = s.X[j], s.Y[j]
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return fmt.Errorf("plot: series %q: %w", s.Name, err)
		}
		c := i
		if colorOf != nil {
			c = colorOf(i)
		}
		l.Color = palette[c%len(palette)]
		l.Width = vg.Points(1.2)
		p.Add(l)
		if s.Name != "" {
			p.Legend.Add(s.Name, l)
		}
	}
	return write(p, path)
}

// Band is one group's curve in a Bands figure: the mean at each x and the range [Lo, Hi] around it.
type Band struct {
	Name        string
	X, Mean     []float64
	Lo, Hi      []float64
	Colour      color.NRGBA
	FillOpacity uint8 // alpha of the range's fill (0: 60)
}

// Bands writes a PNG of the bands to path (atomically): each a mean line over a translucent
// min-max area. Bands with no points are skipped.
func Bands(path, title, xLabel, yLabel string, bands []Band) error {
	p := newPlot(title, xLabel, yLabel)
	for _, b := range bands {
		if len(b.X) == 0 {
			continue
		}
		if len(b.Mean) != len(b.X) || len(b.Lo) != len(b.X) || len(b.Hi) != len(b.X) {
			return fmt.Errorf("plot: band %q has %d x, %d mean, %d lo and %d hi values", b.Name, len(b.X), len(b.Mean), len(b.Lo), len(b.Hi))
		}
		area := make(plotter.XYs, 0, 2*len(b.X))
		line := make(plotter.XYs, len(b.X))
		for i := range b.X {
			area = append(area, plotter.XY{X: b.X[i], Y: b.Lo[i]})
			line[i] = plotter.XY{X: b.X[i], Y: b.Mean[i]}
		}
		for i := len(b.X) - 1; i >= 0; i-- {
			area = append(area, plotter.XY{X: b.X[i], Y: b.Hi[i]})
		}
		poly, err := plotter.NewPolygon(area)
		if err != nil {
			return fmt.Errorf("plot: %s: band %q: %w", path, b.Name, err)
		}
		fill := b.Colour
		fill.A = b.FillOpacity
		if fill.A == 0 {
			fill.A = 60
		}
		poly.Color, poly.LineStyle.Width = fill, 0
		l, err := plotter.NewLine(line)
		if err != nil {
			return fmt.Errorf("plot: %s: band %q: %w", path, b.Name, err)
		}
		l.Color, l.Width = b.Colour, vg.Points(1.5)
		p.Add(poly, l)
		p.Legend.Add(b.Name, l)
	}
	return write(p, path)
}

// newPlot is an empty figure with a title, axis labels, a grid and the legend at the top.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

// write renders p as an 8x5 inch PNG and replaces path with it atomically.
func write(p *plot.Plot, path string) error {
	wt, err := p.WriterTo(8*vg.Inch, 5*vg.Inch, "png")
	if err != nil {
		return fmt.Errorf("plot: %s: %w", path, err)
	}
	if err := atomicfile.Write(path, 0o644, func(w io.Writer) error {
		_, err := wt.WriteTo(w)
		return err
	}); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}
