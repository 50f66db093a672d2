// Package plot draws the PNG figures of training runs with gonum.org/v1/plot: curves of one
// quantity against iterations or env steps, one line per series (Lines), or a mean line over a
// translucent min-max band per group of runs (Bands). Figures are written atomically.
//
// The figures are meant to be read at a glance, so the package, not its callers, decides:
//   - the legend goes in the first corner of the axes that hides no line and no band, and below
//     the axes when every corner holds data;
//   - an axis whose values are all whole numbers (iterations, env steps) is a count axis, with
//     whole-number ticks printed as 500, 2,500 or 20k; the other axis gets 5 to 8 ticks at round
//     steps, printed with no needless decimals;
//   - the axis ranges cover every line and the whole of every band, with a margin, so nothing is
//     clipped at the edge.
//
// AlgoLabel, SizeLabel and SeedsLabel spell runs the same way in every caller's titles.
package plot

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"github.com/sparsepcl/sparsepcl/agent/atomicfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Size of every figure: 8 × 5 inches, 768 × 480 pixels at vgimg's 96 dpi.
const (
	width  = 8 * vg.Inch
	height = 5 * vg.Inch
)

// yMargin is the share of the data's value range left free above and below it.
const yMargin = 0.05

// Series is one named curve.
type Series struct {
	Name string
	X, Y []float64
}

// colour is the i-th colour of the Lines palette; colours repeat after six.
func colour(i int) color.RGBA {
	palette := [...]color.RGBA{
		{R: 0x1f, G: 0x77, B: 0xb4, A: 255}, {R: 0xd6, G: 0x27, B: 0x28, A: 255}, {R: 0x2c, G: 0xa0, B: 0x2c, A: 255},
		{R: 0xff, G: 0x7f, B: 0x0e, A: 255}, {R: 0x94, G: 0x67, B: 0xbd, A: 255}, {R: 0x8c, G: 0x56, B: 0x4b, A: 255},
	}
	return palette[i%len(palette)]
}

// Lines writes a PNG of the series to path (atomically: temp file + rename). Series with no points
// are skipped; colours repeat after six series unless colorOf maps a series to a palette index. A
// figure of one curve with a y label has no legend: the label names the curve.
func Lines(path, title, xLabel, yLabel string, series []Series, colorOf func(i int) int) error {
	f := newFigure(title, xLabel, yLabel)
	for i, s := range series {
		if len(s.X) == 0 {
			continue
		}
		if len(s.X) != len(s.Y) {
			return fmt.Errorf("plot: %s: series %q has %d x and %d y values", path, s.Name, len(s.X), len(s.Y))
		}
		pts := make(plotter.XYs, len(s.X))
		for j := range s.X {
			pts[j].X, pts[j].Y = s.X[j], s.Y[j]
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return fmt.Errorf("plot: %s: series %q: %w", path, s.Name, err)
		}
		c := i
		if colorOf != nil {
			c = colorOf(i)
		}
		l.Color, l.Width = colour(c), vg.Points(1.2)
		f.p.Add(l)
		f.lines = append(f.lines, pts)
		if s.Name != "" {
			f.legend.entries = append(f.legend.entries, legendEntry{name: s.Name, thumbs: []plot.Thumbnailer{l}})
		}
	}
	if len(f.lines) == 1 && yLabel != "" {
		f.legend.entries = nil
	}
	return f.write(path)
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
	f, err := bandsFigure(title, xLabel, yLabel, bands)
	if err != nil {
		return fmt.Errorf("plot: %s: %w", path, err)
	}
	return f.write(path)
}

// bandsFigure assembles a figure of bands (see Bands).
func bandsFigure(title, xLabel, yLabel string, bands []Band) (*figure, error) {
	f := newFigure(title, xLabel, yLabel)
	for _, b := range bands {
		if len(b.X) == 0 {
			continue
		}
		if len(b.Mean) != len(b.X) || len(b.Lo) != len(b.X) || len(b.Hi) != len(b.X) {
			return nil, fmt.Errorf("band %q has %d x, %d mean, %d lo and %d hi values", b.Name, len(b.X), len(b.Mean), len(b.Lo), len(b.Hi))
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
			return nil, fmt.Errorf("band %q: %w", b.Name, err)
		}
		fill := b.Colour
		fill.A = b.FillOpacity
		if fill.A == 0 {
			fill.A = 60
		}
		poly.Color, poly.LineStyle.Width = fill, 0
		l, err := plotter.NewLine(line)
		if err != nil {
			return nil, fmt.Errorf("band %q: %w", b.Name, err)
		}
		l.Color, l.Width = b.Colour, vg.Points(1.5)
		f.p.Add(poly, l)
		f.lines = append(f.lines, line)
		f.bands = append(f.bands, bandArea{x: b.X, lo: b.Lo, hi: b.Hi})
		f.legend.entries = append(f.legend.entries, legendEntry{name: b.Name, thumbs: []plot.Thumbnailer{poly, l}})
	}
	return f, nil
}

// figure is a plot being assembled, with what the axis ranges and the legend's placement are
// computed from: every line and band in data coordinates.
type figure struct {
	p      *plot.Plot
	legend legend
	lines  []plotter.XYs
	bands  []bandArea
}

// bandArea is the range of a band: [lo, hi] at each x.
type bandArea struct {
	x, lo, hi []float64
}

// newFigure is an empty figure with a title, axis labels and a light grid, all text in Liberation
// Sans (easier to read at figure size than gonum's default serif).
func newFigure(title, xLabel, yLabel string) *figure {
	p := plot.New()
	sans := func(size vg.Length) font.Font {
		return font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
	}
	p.Title.Text = title
	p.Title.TextStyle.Font = sans(13)
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	p.X.Label.TextStyle.Font, p.Y.Label.TextStyle.Font = sans(11), sans(11)
	p.X.Tick.Label.Font, p.Y.Tick.Label.Font = sans(10), sans(10)
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = color.Gray{Y: 0xe0}, color.Gray{Y: 0xe0}
	p.Add(g)
	sty := p.Legend.TextStyle
	sty.Font = sans(legendFont)
	return &figure{p: p, legend: legend{style: sty}}
}

// setRanges sets both axes to cover every line and band: the value axis with a margin of yMargin
// of the range on each side (widened to round ticks when 5 to 8 do not fit), a count axis from 0 when the data start near it and to the next tick
// when the data end just short of it. It also sets the tick markers: whole-number ticks on a count
// axis.
func (f *figure) setRanges() {
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	integer := true
	addX := func(x float64) {
		if isFinite(x) {
			xlo, xhi = math.Min(xlo, x), math.Max(xhi, x)
			integer = integer && x == math.Round(x)
		}
	}
	addY := func(y float64) {
		if isFinite(y) {
			ylo, yhi = math.Min(ylo, y), math.Max(yhi, y)
		}
	}
	for _, l := range f.lines {
		for _, pt := range l {
			addX(pt.X)
			addY(pt.Y)
		}
	}
	for _, b := range f.bands {
		for i := range b.x {
			addX(b.x[i])
			addY(b.lo[i])
			addY(b.hi[i])
		}
	}
	if xlo > xhi || ylo > yhi {
		return // nothing to draw: gonum's defaults
	}
	switch {
	case xlo == xhi:
		xlo, xhi = xlo-1, xhi+1
	case integer && xlo >= 0 && xlo <= 0.1*(xhi-xlo):
		xlo = 0 // iterations counted from 1 still start the axis at 0
	}
	if integer {
		// Iterations 0..299 end the axis at the 300 tick, not at an unlabelled edge past 250.
		s := niceStep(xlo, xhi, true).size()
		if next := math.Ceil(xhi/s-1e-9) * s; next-xhi <= 0.05*(xhi-xlo) {
			xhi = next
		}
	}
	if d := yhi - ylo; d > 1e-12*math.Max(1, math.Abs(ylo)) {
		ylo, yhi = ylo-yMargin*d, yhi+yMargin*d
	} else {
		d = math.Max(0.05*math.Abs(ylo), 0.5)
		ylo, yhi = ylo-d, yhi+d
	}
	ylo, yhi = looseRange(ylo, yhi)
	f.p.X.Min, f.p.X.Max, f.p.Y.Min, f.p.Y.Max = xlo, xhi, ylo, yhi
	f.p.X.Tick.Marker = ticks{integer: integer}
	f.p.Y.Tick.Marker = ticks{}
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// place chooses the legend's placement on canvas c (ranges already set): the box's rectangle for
// a corner.
func (f *figure) place(c draw.Canvas) (placement, vg.Rectangle) {
	da := f.p.DataCanvas(c)
	o := newOccupancy(da.Rectangle)
	tx, ty := f.p.Transforms(&da)
	for _, l := range f.lines {
		pts := make([]vg.Point, 0, len(l))
		for _, pt := range l {
			if isFinite(pt.X) && isFinite(pt.Y) {
				pts = append(pts, vg.Point{X: tx(pt.X), Y: ty(pt.Y)})
			}
		}
		o.line(pts)
	}
	for _, b := range f.bands {
		x, lo, hi := make([]vg.Length, len(b.x)), make([]vg.Length, len(b.x)), make([]vg.Length, len(b.x))
		for i := range b.x {
			x[i], lo[i], hi[i] = tx(b.x[i]), ty(b.lo[i]), ty(b.hi[i])
		}
		o.band(x, lo, hi)
	}
	w, h := f.legend.boxSize()
	return choose(o, da.Rectangle, w, h)
}

// render draws the figure on a new w × h canvas, the legend where place puts it.
func (f *figure) render(w, h vg.Length) (*vgimg.Canvas, placement) {
	img := vgimg.New(w, h)
	return img, f.draw(draw.New(img))
}

// draw draws the figure on c, the legend where place puts it.
func (f *figure) draw(c draw.Canvas) placement {
	f.setRanges()
	if len(f.legend.entries) == 0 {
		f.p.Draw(c)
		return below
	}
	where, box := f.place(c)
	if where != below {
		f.p.Draw(c)
		f.legend.drawBox(c, vg.Point{X: box.Min.X, Y: box.Max.Y})
		return where
	}
	strip := f.legend.stripHeight(c.Size().X)
	f.p.Draw(draw.Crop(c, 0, 0, strip, 0))
	f.legend.drawStrip(draw.Crop(c, 0, 0, 0, strip-c.Size().Y))
	return below
}

// write renders the figure as a PNG and replaces path with it atomically.
func (f *figure) write(path string) error {
	img, _ := f.render(width, height)
	return writePNG(path, img)
}

// writePNG encodes img as a PNG and replaces path with it atomically.
func writePNG(path string, img *vgimg.Canvas) error {
	if err := atomicfile.Write(path, 0o644, func(w io.Writer) error {
		_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
		return err
	}); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}
