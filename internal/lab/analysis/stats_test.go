package analysis

import (
	"math"
	"slices"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
)

// The std is the population one (divide by n), as every table has printed it: {1, 3} has std 1,
// where the sample std would be √2.
func TestMeanStd(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name      string
		x         []float64
		mean, std float64
	}{
		{"none", nil, nan, nan},
		{"one", []float64{4}, 4, 0},
		{"two", []float64{1, 3}, 2, 1},
		{"population, not sample", []float64{2, 4, 4, 4, 5, 5, 7, 9}, 5, 2},
		{"negative", []float64{-1, -2, -3}, -2, math.Sqrt(2.0 / 3)},
	}
	for _, tc := range cases {
		m, s := MeanStd(tc.x)
		same := func(a, b float64) bool { return math.IsNaN(a) && math.IsNaN(b) || math.Abs(a-b) < 1e-12 }
		if !same(m, tc.mean) || !same(s, tc.std) {
			t.Errorf("%s: MeanStd(%v) = %v, %v; want %v, %v", tc.name, tc.x, m, s, tc.mean, tc.std)
		}
	}
}

func TestMedian(t *testing.T) {
	cases := []struct {
		x    []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{2, 2, 9, 9}, 5.5},
	}
	for _, tc := range cases {
		in := slices.Clone(tc.x)
		if got := Median(tc.x); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.x, got, tc.want)
		}
		if !slices.Equal(in, tc.x) {
			t.Errorf("Median sorted its argument: %v", tc.x)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median of nothing is not NaN")
	}
}

// A band of width 1 is the mean, min and max over the seeds that have each iteration; NaN values
// are left out.
func TestBandPerIteration(t *testing.T) {
	seeds := [][]Point{
		{{0, 0, 1}, {1, 1, 3}, {2, 2, 5}},
		{{0, 0, 3}, {1, 1, -1}, {2, 2, math.NaN()}}, // no value at iteration 2
	}
	b := SeedBand(seeds, 1)
	want := [][]float64{{0, 1, 2}, {2, 1, 5}, {1, -1, 5}, {3, 3, 5}}
	for i, got := range [][]float64{b.X, b.Mean, b.Lo, b.Hi} {
		if !slices.Equal(got, want[i]) {
			t.Errorf("series %d: %v, want %v", i, got, want[i])
		}
	}
}

// Every figure draws an algorithm in its own family of shades: no shade of one algorithm is a
// shade of another, and the first bands are the colours the committed figures use.
func TestPalette(t *testing.T) {
	algos := []config.Algo{config.AlgoSparse, config.AlgoSoft, config.AlgoTsallis}
	seen := map[[3]uint8]config.Algo{}
	for _, a := range algos {
		for _, c := range shades(a) {
			k := [3]uint8{c.R, c.G, c.B}
			if other, dup := seen[k]; dup {
				t.Errorf("%v is a shade of both %s and %s", c, other, a)
			}
			seen[k] = a
		}
	}
	p := Palette{}
	if c := p.Next(config.AlgoSparse); c != rgb(0xd6, 0x27, 0x28) {
		t.Errorf("first sparse band %v, want red", c)
	}
	if c := p.Next(config.AlgoSoft); c != rgb(0x1f, 0x77, 0xb4) {
		t.Errorf("first soft band %v, want blue", c)
	}
	if c := p.Next(config.AlgoSparse); c == rgb(0xd6, 0x27, 0x28) {
		t.Error("the second sparse band has the first one's colour")
	}
}
