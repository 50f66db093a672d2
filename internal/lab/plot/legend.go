package plot

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// placement is where the legend goes: a corner inside the axes, or below them.
type placement int

const (
	topRight placement = iota
	topLeft
	bottomRight
	bottomLeft
	below
)

func (p placement) String() string {
	return [...]string{"top right", "top left", "bottom right", "bottom left", "below"}[p]
}

// legendEntry is one line of the legend: a name and the swatches drawn next to it.
type legendEntry struct {
	name   string
	thumbs []plot.Thumbnailer
}

// Legend geometry, in points.
const (
	legendFont  = 10
	legendThumb = 22  // width of a swatch
	legendGap   = 5   // between swatch and text, and around the box's content
	legendInset = 4   // between the box and the axes
	legendCol   = 18  // between columns below the axes
	legendRow   = 1.4 // row height, in font sizes
	cell        = 2   // side of an occupancy cell
	// A box wider or taller than this share of the data area goes below the axes even if a
	// corner is free: inside, it would leave too little room to read the curves.
	legendMaxShare = 0.45
)

// legend lays out and draws the entries.
type legend struct {
	entries []legendEntry
	style   text.Style
}

func (l legend) rowHeight() vg.Length { return vg.Length(legendRow * legendFont) }

// entryWidth is the width of the widest entry: swatch, gap and text.
func (l legend) entryWidth() vg.Length {
	var w vg.Length
	for _, e := range l.entries {
		w = max(w, l.style.Rectangle(e.name).Max.X)
	}
	return legendThumb + legendGap + w
}

// boxSize is the size of the one-column box drawn inside the axes.
func (l legend) boxSize() (vg.Length, vg.Length) {
	return l.entryWidth() + 2*legendGap, vg.Length(len(l.entries))*l.rowHeight() + 2*legendGap
}

// grid is the number of columns and rows of the legend below the axes, in a strip of width w.
func (l legend) grid(w vg.Length) (cols, rows int) {
	cols = max(1, int((w+legendCol)/(l.entryWidth()+legendCol)))
	cols = min(cols, len(l.entries))
	return cols, (len(l.entries) + cols - 1) / cols
}

// stripHeight is the height of the strip below the axes that holds the legend.
func (l legend) stripHeight(w vg.Length) vg.Length {
	_, rows := l.grid(w)
	return vg.Length(rows)*l.rowHeight() + 2*legendGap
}

// drawBox draws the legend in a white, outlined box whose top left corner is at.
func (l legend) drawBox(c draw.Canvas, at vg.Point) {
	w, h := l.boxSize()
	box := vg.Rectangle{Min: vg.Point{X: at.X, Y: at.Y - h}, Max: vg.Point{X: at.X + w, Y: at.Y}}
	c.SetColor(color.NRGBA{R: 255, G: 255, B: 255, A: 235})
	c.Fill(box.Path())
	c.SetLineStyle(draw.LineStyle{Color: color.Gray{Y: 0xb0}, Width: vg.Points(0.5)})
	c.Stroke(box.Path())
	l.drawEntries(c, vg.Point{X: at.X + legendGap, Y: at.Y - legendGap}, 1, 0)
}

// drawStrip draws the legend centred in the strip c, in as many columns as fit.
func (l legend) drawStrip(c draw.Canvas) {
	cols, _ := l.grid(c.Size().X)
	w := vg.Length(cols)*l.entryWidth() + vg.Length(cols-1)*legendCol
	l.drawEntries(c, vg.Point{X: c.Center().X - w/2, Y: c.Max.Y - legendGap}, cols, legendCol)
}

// drawEntries draws the entries row by row in cols columns from the top left corner at.
func (l legend) drawEntries(c draw.Canvas, at vg.Point, cols int, colGap vg.Length) {
	rh, ew := l.rowHeight(), l.entryWidth()
	sty := l.style
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	for i, e := range l.entries {
		x := at.X + vg.Length(i%cols)*(ew+colGap)
		y := at.Y - (vg.Length(i/cols)+0.5)*rh // the row's centre line
		icon := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: y - 0.3*rh}, Max: vg.Point{X: x + legendThumb, Y: y + 0.3*rh}}}
		for _, t := range e.thumbs {
			t.Thumbnail(&icon)
		}
		c.FillText(sty, vg.Point{X: x + legendThumb + legendGap, Y: y}, e.name)
	}
}

// occupancy is a raster of the data area: for each cell of cell × cell points, how much it
// matters to keep it visible (0: nothing drawn there, 1: inside a band, 2: on a line).
type occupancy struct {
	min    vg.Point
	nx, ny int
	w      []uint8
}

// Weights of what an occupancy cell holds.
const (
	onBand = 1
	onLine = 2
)

func newOccupancy(r vg.Rectangle) *occupancy {
	nx := max(1, int(math.Ceil(float64(r.Size().X/cell))))
	ny := max(1, int(math.Ceil(float64(r.Size().Y/cell))))
	return &occupancy{min: r.Min, nx: nx, ny: ny, w: make([]uint8, nx*ny)}
}

// index is the cell of canvas point (x, y), ok false outside the raster.
func (o *occupancy) index(x, y vg.Length) (int, int, bool) {
	i, j := int(math.Floor(float64((x-o.min.X)/cell))), int(math.Floor(float64((y-o.min.Y)/cell)))
	return i, j, i >= 0 && j >= 0 && i < o.nx && j < o.ny
}

func (o *occupancy) mark(x, y vg.Length, w uint8) {
	if i, j, ok := o.index(x, y); ok {
		o.w[j*o.nx+i] = max(o.w[j*o.nx+i], w)
	}
}

// line marks the cells a polyline crosses, sampled every half cell along each segment.
func (o *occupancy) line(pts []vg.Point) {
	for k, p := range pts {
		o.mark(p.X, p.Y, onLine)
		if k == 0 {
			continue
		}
		q := pts[k-1]
		n := int(math.Ceil(math.Hypot(float64(p.X-q.X), float64(p.Y-q.Y)) / (cell / 2)))
		for s := 1; s < n; s++ {
			f := vg.Length(s) / vg.Length(n)
			o.mark(q.X+f*(p.X-q.X), q.Y+f*(p.Y-q.Y), onLine)
		}
	}
}

// band marks the cells between lo and hi, interpolated linearly between consecutive x.
func (o *occupancy) band(x, lo, hi []vg.Length) {
	for k := range x {
		o.column(x[k], lo[k], hi[k])
		if k == 0 {
			continue
		}
		x0, x1 := x[k-1], x[k]
		n := int(math.Ceil(math.Abs(float64(x1-x0)) / (cell / 2)))
		for s := 1; s < n; s++ {
			f := vg.Length(s) / vg.Length(n)
			o.column(x0+f*(x1-x0), lo[k-1]+f*(lo[k]-lo[k-1]), hi[k-1]+f*(hi[k]-hi[k-1]))
		}
	}
}

func (o *occupancy) column(x, lo, hi vg.Length) {
	if lo > hi {
		lo, hi = hi, lo
	}
	for y := lo; y <= hi; y += cell / 2 {
		o.mark(x, y, onBand)
	}
	o.mark(x, hi, onBand)
}

// cost is the summed weight of the cells that r touches.
func (o *occupancy) cost(r vg.Rectangle) int {
	i0, j0, _ := o.index(r.Min.X, r.Min.Y)
	i1, j1, _ := o.index(r.Max.X, r.Max.Y)
	sum := 0
	for j := max(j0, 0); j <= min(j1, o.ny-1); j++ {
		for i := max(i0, 0); i <= min(i1, o.nx-1); i++ {
			sum += int(o.w[j*o.nx+i])
		}
	}
	return sum
}

// corner is the legend box of size (w, h) in corner p of the data area da, inset from the axes.
func corner(p placement, da vg.Rectangle, w, h vg.Length) vg.Rectangle {
	x, y := da.Max.X-legendInset-w, da.Max.Y-legendInset-h
	if p == topLeft || p == bottomLeft {
		x = da.Min.X + legendInset
	}
	if p == bottomRight || p == bottomLeft {
		y = da.Min.Y + legendInset
	}
	return vg.Rectangle{Min: vg.Point{X: x, Y: y}, Max: vg.Point{X: x + w, Y: y + h}}
}

// choose is the first corner (top right, top left, bottom right, bottom left) whose box, with a
// margin of one cell, covers no line and no band; below if there is none or the box is too big.
func choose(o *occupancy, da vg.Rectangle, w, h vg.Length) (placement, vg.Rectangle) {
	if w > legendMaxShare*da.Size().X || h > legendMaxShare*da.Size().Y {
		return below, vg.Rectangle{}
	}
	for _, p := range []placement{topRight, topLeft, bottomRight, bottomLeft} {
		r := corner(p, da, w, h)
		grown := vg.Rectangle{Min: vg.Point{X: r.Min.X - cell, Y: r.Min.Y - cell}, Max: vg.Point{X: r.Max.X + cell, Y: r.Max.Y + cell}}
		if o.cost(grown) == 0 {
			return p, r
		}
	}
	return below, vg.Rectangle{}
}
