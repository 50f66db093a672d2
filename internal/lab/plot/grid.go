package plot

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Panel is one axes of a Grid figure: its own title and bands.
type Panel struct {
	Title string
	Bands []Band
}

// Size of one Grid panel, and the height of the figure's title.
const (
	panelWidth  = 4.4 * vg.Inch
	panelHeight = 3.1 * vg.Inch
	gridTitle   = 0.7 * vg.Inch // two lines
)

// Grid writes a PNG of panels laid out in rows under a title of up to two lines (atomically), like
// a paper's figure grid: one row per task, one column per size. Rows may be shorter than the longest; they are
// right-aligned, so that every row's last panel (a task's largest size, which a paper's claim compares) sits in
// the last column, and their first tiles stay empty. Every panel has its own axes, ranges and legend, chosen as
// in Bands.
func Grid(path, title, xLabel, yLabel string, rows [][]Panel) error {
	img, err := gridCanvas(title, xLabel, yLabel, rows)
	if err != nil {
		return fmt.Errorf("plot: %s: %w", path, err)
	}
	return writePNG(path, img)
}

// GridPNG is Grid's figure as PNG bytes, for a caller that compares a figure with a committed one
// before it writes anything (pcl tables --check).
func GridPNG(title, xLabel, yLabel string, rows [][]Panel) ([]byte, error) {
	img, err := gridCanvas(title, xLabel, yLabel, rows)
	if err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&b); err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	return b.Bytes(), nil
}

// gridCanvas draws Grid's figure.
func gridCanvas(title, xLabel, yLabel string, rows [][]Panel) (*vgimg.Canvas, error) {
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	if cols == 0 {
		return nil, errors.New("a grid with no panels")
	}
	w, h := vg.Length(cols)*panelWidth, vg.Length(len(rows))*panelHeight+gridTitle
	img := vgimg.New(w, h)
	c := draw.New(img)
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	sty := draw.TextStyle{
		Color:   color.Black,
		Font:    font.Font{Typeface: "Liberation", Variant: "Sans", Size: 15},
		XAlign:  draw.XCenter,
		YAlign:  draw.YCenter,
		Handler: plot.DefaultTextHandler,
	}
	c.FillText(sty, vg.Point{X: w / 2, Y: h - gridTitle/2}, title)
	body := draw.Crop(c, 0, 0, 0, -gridTitle)
	tiles := draw.Tiles{Rows: len(rows), Cols: cols, PadX: vg.Points(6), PadY: vg.Points(6), PadLeft: vg.Points(4), PadRight: vg.Points(4), PadBottom: vg.Points(4)}
	for i, r := range rows {
		skip := cols - len(r)
		for j, p := range r {
			f, err := bandsFigure(p.Title, xLabel, yLabel, p.Bands)
			if err != nil {
				return nil, fmt.Errorf("panel %q: %w", p.Title, err)
			}
			f.draw(tiles.At(body, skip+j, i))
		}
	}
	return img, nil
}
