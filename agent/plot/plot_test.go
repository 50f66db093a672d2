package plot

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"
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
}
