package plot

import (
	"errors"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

func TestLinesWritesPNG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.png")
	s := []Series{{Name: "a", X: []float64{0, 1, 2}, Y: []float64{0, 1, 4}}, {Name: "b", X: []float64{0, 2}, Y: []float64{1, 1}}}
	if err := Lines(path, "t", "x", "y", s, nil); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
		t.Fatalf("image too small: %v", b)
	}
	if err := Lines(path, "t", "x", "y", []Series{{X: []float64{1}, Y: nil}}, nil); err == nil {
		t.Fatal("mismatched series accepted")
	}
	// Written atomically (agent/atomicfile): only the figure is left, world-readable.
	es, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Name() != "r.png" {
		t.Fatalf("directory holds %v, want only r.png", es)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("stat: %v, %v; want mode 0644", st, err)
	}
	missing := filepath.Join(filepath.Dir(path), "gone", "r.png")
	if err := Lines(missing, "t", "x", "y", s, nil); err == nil || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Fatalf("error %v, want one naming %s", err, missing)
	}
}

func TestBandsWritesPNG(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "b.png")
	ok := Band{Name: "sparse", X: []float64{0, 1, 2}, Mean: []float64{0, 1, 2}, Lo: []float64{-1, 0, 1}, Hi: []float64{1, 2, 3}}
	if err := Bands(path, "t", "iteration", "reward", []Band{ok, {Name: "empty"}}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	bad := ok
	bad.Hi = bad.Hi[:2]
	if err := Bands(filepath.Join(dir, "bad.png"), "t", "x", "y", []Band{bad}); err == nil || !strings.Contains(err.Error(), `band "sparse"`) {
		t.Fatalf("error %v, want one naming the mismatched band", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.png")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed figure left a file: %v", err)
	}
}

func TestCountAxisTicksAreWholeNumbers(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []string // labelled ticks, when the case pins them
	}{
		{0, 30, []string{"0", "5", "10", "15", "20", "25", "30"}},
		{0, 300, []string{"0", "50", "100", "150", "200", "250", "300"}},
		{0, 1000, []string{"0", "200", "400", "600", "800", "1,000"}},
		{0, 30000, []string{"0", "5k", "10k", "15k", "20k", "25k", "30k"}},
		{0, 100000, []string{"0", "20k", "40k", "60k", "80k", "100k"}},
		{0, 2.5e6, []string{"0", "0.5M", "1M", "1.5M", "2M", "2.5M"}},
		{0, 97, nil},
		{1, 149, nil},
		{0, 12, nil},
		{0, 7777, nil},
		{100, 40000, nil},
	} {
		var labels []string
		for _, tk := range (ticks{integer: true}).Ticks(c.lo, c.hi) {
			if tk.Value < c.lo || tk.Value > c.hi {
				t.Errorf("[%g, %g]: tick %g outside the range", c.lo, c.hi, tk.Value)
			}
			if tk.Value != math.Round(tk.Value) {
				t.Errorf("[%g, %g]: tick at %g on a count axis", c.lo, c.hi, tk.Value)
			}
			if tk.IsMinor() {
				continue
			}
			if strings.Contains(tk.Label, ".") && !strings.HasSuffix(tk.Label, "M") {
				t.Errorf("[%g, %g]: label %q has a fraction", c.lo, c.hi, tk.Label)
			}
			labels = append(labels, tk.Label)
		}
		if n := len(labels); n < 5 || n > 8 {
			t.Errorf("[%g, %g]: %d labelled ticks %v, want 5 to 8", c.lo, c.hi, n, labels)
		}
		if c.want != nil && !slices.Equal(labels, c.want) {
			t.Errorf("[%g, %g]: labels %v, want %v", c.lo, c.hi, labels, c.want)
		}
	}
	// A range under 4 has fewer than 5 whole numbers: step 1, never 0.5.
	for _, tk := range (ticks{integer: true}).Ticks(0, 2) {
		if tk.Value != math.Round(tk.Value) {
			t.Errorf("[0, 2]: tick at %g", tk.Value)
		}
	}
}

func TestValueAxisTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []string
	}{
		{-0.05, 1.05, []string{"0", "0.2", "0.4", "0.6", "0.8", "1"}},
		{-1.6, 32.6, []string{"0", "5", "10", "15", "20", "25", "30"}},
		{-720, 540, []string{"-600", "-400", "-200", "0", "200", "400"}},
		{0.9, 1.02, []string{"0.9", "0.92", "0.94", "0.96", "0.98", "1", "1.02"}},
		{-781, 16406, []string{"0", "2.5k", "5k", "7.5k", "10k", "12.5k", "15k"}},
		{3, 3.0007, nil},
	} {
		var labels []string
		for _, tk := range (ticks{}).Ticks(c.lo, c.hi) {
			if tk.Value < c.lo || tk.Value > c.hi {
				t.Errorf("[%g, %g]: tick %g outside the range", c.lo, c.hi, tk.Value)
			}
			if !tk.IsMinor() {
				labels = append(labels, tk.Label)
			}
		}
		if n := len(labels); n < 5 || n > 8 {
			t.Errorf("[%g, %g]: %d labelled ticks %v, want 5 to 8", c.lo, c.hi, n, labels)
		}
		if c.want != nil && !slices.Equal(labels, c.want) {
			t.Errorf("[%g, %g]: labels %v, want %v", c.lo, c.hi, labels, c.want)
		}
		for _, l := range labels {
			if strings.HasSuffix(l, "0") && strings.Contains(l, ".") {
				t.Errorf("[%g, %g]: label %q has a needless trailing zero", c.lo, c.hi, l)
			}
		}
	}
}

// lineFigure is a figure of one curve through pts (x, y, x, y, ...), ranges set.
func lineFigure(t *testing.T, name string, pts ...float64) *figure {
	t.Helper()
	f := newFigure("t", "iteration", "reward")
	var xy plotter.XYs
	for i := 0; i+1 < len(pts); i += 2 {
		xy = append(xy, plotter.XY{X: pts[i], Y: pts[i+1]})
	}
	l, err := plotter.NewLine(xy)
	if err != nil {
		t.Fatal(err)
	}
	f.p.Add(l)
	f.lines = append(f.lines, xy)
	f.legend.entries = append(f.legend.entries, legendEntry{name: name, thumbs: []plot.Thumbnailer{l}})
	f.setRanges()
	return f
}

func placeOnFigureCanvas(f *figure) placement {
	p, _ := f.place(draw.New(vgimg.New(width, height)))
	return p
}

func TestLegendAvoidsTheData(t *testing.T) {
	// A reward curve that rises and ends top right: the legend must go elsewhere.
	rising := lineFigure(t, "sampled", 0, 0, 50, 2, 100, 10, 150, 30, 200, 31, 300, 31)
	if p := placeOnFigureCanvas(rising); p == topRight {
		t.Errorf("rising curve: legend at %v, over the curve's end", p)
	}
	// A falling curve leaves the top right free: the preferred corner.
	falling := lineFigure(t, "loss", 0, 10, 100, 1, 300, 0.5)
	if p := placeOnFigureCanvas(falling); p != topRight {
		t.Errorf("falling curve: legend at %v, want top right", p)
	}
	// A curve along the top and one along the bottom: the left corners hold the starts of both.
	both := lineFigure(t, "flat", 0, 30, 300, 30)
	xy := plotter.XYs{{X: 0, Y: 0}, {X: 300, Y: 0}}
	l, _ := plotter.NewLine(xy)
	both.p.Add(l)
	both.lines = append(both.lines, xy)
	both.setRanges()
	if p := placeOnFigureCanvas(both); p != below {
		t.Errorf("curves along the top and bottom edges: legend at %v, want below", p)
	}
	// A band that fills the axes: no corner is free.
	f := newFigure("t", "env steps", "return")
	var x, lo, hi []float64
	for i := range 101 {
		x, lo, hi = append(x, float64(i*100)), append(lo, -500), append(hi, 500)
	}
	f.bands = append(f.bands, bandArea{x: x, lo: lo, hi: hi})
	f.legend.entries = append(f.legend.entries, legendEntry{name: "sparse"})
	f.setRanges()
	if p := placeOnFigureCanvas(f); p != below {
		t.Errorf("band over the whole axes: legend at %v, want below", p)
	}
}

func TestRangesCoverBands(t *testing.T) {
	f := newFigure("t", "iteration", "reward")
	x := []float64{1, 2, 3, 20}
	f.lines = append(f.lines, plotter.XYs{{X: 1, Y: 0}, {X: 2, Y: 1}, {X: 3, Y: 2}, {X: 20, Y: 3}})
	f.bands = append(f.bands, bandArea{x: x, lo: []float64{-5, -1, 0, 1}, hi: []float64{1, 2, 3, 12}})
	f.setRanges()
	span := 12.0 - -5.0
	if f.p.Y.Max < 12+0.04*span || f.p.Y.Min > -5-0.04*span {
		t.Errorf("y range [%g, %g] does not hold the band [-5, 12] with a margin", f.p.Y.Min, f.p.Y.Max)
	}
	if f.p.X.Min != 0 || f.p.X.Max != 20 {
		t.Errorf("x range [%g, %g], want [0, 20]: a count axis from 1 starts at 0", f.p.X.Min, f.p.X.Max)
	}
	if _, ok := f.p.X.Tick.Marker.(ticks); !ok || !f.p.X.Tick.Marker.(ticks).integer {
		t.Errorf("x marker %#v, want whole-number ticks for whole-number x", f.p.X.Tick.Marker)
	}
	// Iterations 0..299 end the axis at the 300 tick; 0..280 stay at 280.
	for _, c := range []struct{ last, want float64 }{{299, 300}, {29, 30}, {280, 280}, {99_900, 100_000}} {
		g := newFigure("t", "iteration", "reward")
		g.lines = append(g.lines, plotter.XYs{{X: 0, Y: 0}, {X: c.last, Y: 1}})
		g.setRanges()
		if g.p.X.Max != c.want {
			t.Errorf("x data up to %g: axis up to %g, want %g", c.last, g.p.X.Max, c.want)
		}
	}
	// Returns between 8.5 and 16.8: padded to 8.1..17.2, where no round step gives 5 to 8 ticks,
	// so the axis widens to 8..18 and gets 6 ticks of 2.
	ret := newFigure("t", "env steps", "return")
	ret.lines = append(ret.lines, plotter.XYs{{X: 400, Y: 16.8}, {X: 800, Y: 8.5}, {X: 16000, Y: 10}})
	ret.setRanges()
	var labels []string
	for _, tk := range ret.p.Y.Tick.Marker.Ticks(ret.p.Y.Min, ret.p.Y.Max) {
		if !tk.IsMinor() {
			labels = append(labels, tk.Label)
		}
	}
	if ret.p.Y.Min != 8 || ret.p.Y.Max != 18 || len(labels) < 5 || len(labels) > 8 {
		t.Errorf("returns 8.5..16.8: y range [%g, %g], labels %v; want [8, 18] and 5 to 8 labels", ret.p.Y.Min, ret.p.Y.Max, labels)
	}
	// A constant curve still gets a range around it.
	flat := newFigure("t", "x", "y")
	flat.lines = append(flat.lines, plotter.XYs{{X: 0.5, Y: 1}, {X: 1.5, Y: 1}})
	flat.setRanges()
	if !(flat.p.Y.Min < 1 && flat.p.Y.Max > 1) {
		t.Errorf("constant 1: y range [%g, %g]", flat.p.Y.Min, flat.p.Y.Max)
	}
	if flat.p.X.Tick.Marker.(ticks).integer {
		t.Error("fractional x treated as a count axis")
	}
}

func TestFigureIsAPNGOfTheStatedSize(t *testing.T) {
	dir := t.TempDir()
	var x, mean, lo, hi []float64
	for i := range 301 {
		v := 31 * (1 - math.Exp(-float64(i)/60))
		x, mean, lo, hi = append(x, float64(i*100)), append(mean, v), append(lo, v-3), append(hi, v+3)
	}
	b := Band{Name: "sparse α = 0.05", X: x, Mean: mean, Lo: lo, Hi: hi, Colour: color.NRGBA{B: 200, A: 255}}
	for _, c := range []struct {
		name string
		draw func(path string) error
	}{
		{"lines.png", func(p string) error {
			return Lines(p, "Copy-v0 |A| = 20 (base 5), sparse α = 0.05, seed 1", "iteration", "reward", []Series{{Name: "sampled", X: x, Y: mean}}, nil)
		}},
		{"bands.png", func(p string) error { return Bands(p, "t", "env steps", "return", []Band{b}) }},
	} {
		path := filepath.Join(dir, c.name)
		if err := c.draw(path); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: not a PNG: %v", c.name, err)
		}
		if b := img.Bounds(); b.Dx() != 768 || b.Dy() != 480 {
			t.Errorf("%s: %v, want 768 × 480 (8 × 5 in at 96 dpi)", c.name, b)
		}
	}
}

func TestLabels(t *testing.T) {
	for got, want := range map[string]string{
		AlgoLabel("sparse", 0.05, 0):                          "sparse α = 0.05",
		AlgoLabel("soft", 0.01, 0):                            "soft τ = 0.01",
		AlgoLabel("tsallis", 0.1, 1.5):                        "tsallis q = 1.5, α = 0.1",
		AlgosLabel([]config.Algo{"sparse", "sparse", "soft"}): "sparse vs soft PCL",
		SizeLabel(20, 5, 0):                                   "|A| = 20 (base 5)",
		SizeLabel(15625, 0, 5):                                "grid 5 (|A| = 15,625)",
		SizeLabel(0, 0, 3):                                    "grid 3",
		SizeLabel(2, 0, 0):                                    "|A| = 2",
		SeedsLabel(1, 1):                                      "1 seed",
		SeedsLabel(5, 5):                                      "mean and min–max over 5 seeds",
		SeedsLabel(1, 3):                                      "mean and min–max over 1–3 seeds",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

// A grid is one PNG of cols × rows panels under a title band; bad input names the panel.
func TestGridFigure(t *testing.T) {
	dir := t.TempDir()
	band := func(n int) Band {
		var x, m, lo, hi []float64
		for i := range n {
			x, m, lo, hi = append(x, float64(i)), append(m, float64(i)), append(lo, float64(i)-1), append(hi, float64(i)+1)
		}
		return Band{Name: "sparse α = 0.05", X: x, Mean: m, Lo: lo, Hi: hi, Colour: color.NRGBA{R: 200, A: 255}}
	}
	rows := [][]Panel{
		{{Title: "Copy |A| = 20", Bands: []Band{band(50)}}, {Title: "Copy |A| = 40", Bands: []Band{band(50)}}, {Title: "Copy |A| = 80", Bands: []Band{band(10)}}},
		{{Title: "Reverse |A| = 16", Bands: []Band{band(30)}}},
	}
	path := filepath.Join(dir, "grid.png")
	if err := Grid(path, "Figure 1", "iteration", "reward", rows); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	wantW, wantH := int(3*panelWidth.Dots(96)+0.5), int((2*panelHeight+gridTitle).Dots(96)+0.5)
	if b := img.Bounds(); b.Dx() != wantW || b.Dy() != wantH {
		t.Fatalf("grid is %dx%d, want %dx%d (3 columns, 2 rows)", b.Dx(), b.Dy(), wantW, wantH)
	}
	// The short row is right-aligned: its one panel in the last column, the tiles before it blank.
	ink := func(col, row int) int {
		b := img.Bounds()
		top := int(gridTitle.Dots(96) + 0.5)
		tw, th := b.Dx()/3, (b.Dy()-top)/2
		n := 0
		for y := top + row*th; y < top+(row+1)*th; y++ {
			for x := col * tw; x < (col+1)*tw; x++ {
				if r, g, bl, _ := img.At(x, y).RGBA(); r != 0xffff || g != 0xffff || bl != 0xffff {
					n++
				}
			}
		}
		return n
	}
	for _, tile := range []struct{ col, row int }{{0, 0}, {1, 0}, {2, 0}, {2, 1}} {
		if ink(tile.col, tile.row) == 0 {
			t.Errorf("tile (column %d, row %d) is blank; it holds a panel", tile.col, tile.row)
		}
	}
	for _, tile := range []struct{ col, row int }{{0, 1}, {1, 1}} {
		if n := ink(tile.col, tile.row); n != 0 {
			t.Errorf("tile (column %d, row %d) has %d drawn pixels; the short row is right-aligned, so it is blank", tile.col, tile.row, n)
		}
	}
	bad := band(5)
	bad.Hi = bad.Hi[:2]
	err = Grid(filepath.Join(dir, "bad.png"), "t", "x", "y", [][]Panel{{{Title: "broken panel", Bands: []Band{bad}}}})
	if err == nil || !strings.Contains(err.Error(), "broken panel") {
		t.Fatalf("a band of mismatched lengths: %v", err)
	}
	if err := Grid(filepath.Join(dir, "empty.png"), "t", "x", "y", nil); err == nil {
		t.Fatal("an empty grid was drawn")
	}
}
