package sweep

import (
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
)

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
