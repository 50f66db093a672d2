package plot

import (
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strings"
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
	// Written atomically (internal/atomicfile): only the figure is left, world-readable.
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
