package experiment

import (
	"math"
	"slices"
	"strings"
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
	seeds := [][]point{
		{{0, 0, 1}, {1, 1, 3}, {2, 2, 5}},
		{{0, 0, 3}, {1, 1, -1}, {2, 2, math.NaN()}}, // no value at iteration 2
	}
	b := band(seeds, 1)
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
	algos := []string{config.AlgoSparse, config.AlgoSoft, config.AlgoTsallis}
	seen := map[[3]uint8]string{}
	for _, a := range algos {
		for _, c := range shades(a) {
			k := [3]uint8{c.R, c.G, c.B}
			if other, dup := seen[k]; dup {
				t.Errorf("%v is a shade of both %s and %s", c, other, a)
			}
			seen[k] = a
		}
	}
	p := palette{}
	if c := p.next(config.AlgoSparse); c != rgb(0xd6, 0x27, 0x28) {
		t.Errorf("first sparse band %v, want red", c)
	}
	if c := p.next(config.AlgoSoft); c != rgb(0x1f, 0x77, 0xb4) {
		t.Errorf("first soft band %v, want blue", c)
	}
	if c := p.next(config.AlgoSparse); c == rgb(0xd6, 0x27, 0x28) {
		t.Error("the second sparse band has the first one's colour")
	}
}

func TestID(t *testing.T) {
	c := config.Default()
	c.Env, c.Base, c.Algo, c.Alpha, c.Seed = "Copy-v0", 5, config.AlgoSparse, 0.05, 1
	cases := []struct {
		edit func(*config.Config)
		want string
	}{
		{func(*config.Config) {}, "Copy-A20-sparse-a0.05-s1"},
		{func(c *config.Config) { c.Algo, c.TsallisQ = config.AlgoTsallis, 1.5 }, "Copy-A20-tsallis-a0.05-q1.5-s1"},
		{func(c *config.Config) {
			c.Env, c.Grid, c.Algo, c.Alpha, c.Seed = "HalfCheetah-v5", 3, config.AlgoSoft, 0.01, 2
		}, "HalfCheetah-v5-grid3-soft-a0.01-s2"},
		{func(c *config.Config) { c.Env, c.Grid = "CartPole-v1", 0 }, "CartPole-v1-sparse-a0.05-s1"},
	}
	for _, tc := range cases {
		x := c
		tc.edit(&x)
		if got := ID(x); got != tc.want {
			t.Errorf("ID = %s, want %s", got, tc.want)
		}
	}
}

func TestBaseWeights(t *testing.T) {
	def := func(b int) float64 { return float64(b) / 100 }
	cases := []struct {
		in    string
		bases []int
		want  map[int]float64
		err   string
	}{
		{"", []int{5, 40}, map[int]float64{5: 0.05, 40: 0.4}, ""},
		{"0.1", []int{5, 40}, map[int]float64{5: 0.1, 40: 0.1}, ""},
		{"5:0.05, 40:0.02", []int{5, 40}, map[int]float64{5: 0.05, 40: 0.02}, ""},
		{"5:0.05", []int{5, 40}, nil, "base 40 has no weight"},
		{"5:0.05,40:0.1,7:0.1", []int{5, 40}, nil, "base 7 is not among"},
		{"5:0.05,5:0.1", []int{5}, nil, "base 5 has two weights"},
		{"5=0.05", []int{5}, nil, "neither a number nor"},
		{"5:x", []int{5}, nil, `"5:x" is not base:weight`},
	}
	for _, tc := range cases {
		got, err := baseWeights(tc.in, "sparse-alpha", tc.bases, def)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "--sparse-alpha") {
				t.Errorf("%q: error %v, want one naming --sparse-alpha and %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("%q: %v, want %v", tc.in, got, tc.want)
		}
		for b, w := range tc.want {
			if got[b] != w {
				t.Errorf("%q: base %d weight %v, want %v", tc.in, b, got[b], w)
			}
		}
	}
}
