package pcl

import (
	"math"
	"testing"
)

func TestGapCounter(t *testing.T) {
	cases := []struct {
		name            string
		rows            [][]float32
		every           int
		within          []float64 // at thresholds 1, 2, 5
		p10, med, p90   float64
		states, actions int
	}{
		{"one row: the best counts itself, its own gap is left out of the quantiles",
			[][]float32{{3, 2.5, 1, -3}}, 1, []float64{2, 3, 3}, 0.5, 2, 6, 1, 4},
		{"ties at the best: one is the best, the other a gap of 0 (the median of two is the upper)",
			[][]float32{{1, 1, 0}}, 1, []float64{3, 3, 3}, 0, 1, 1, 1, 3},
		{"two rows averaged; quantiles from every second row only",
			[][]float32{{0, -1.5, -10}, {5, 4, 3}}, 2, []float64{1.5, 2.5, 2.5}, 1.5, 10, 10, 2, 3},
	}
	for _, c := range cases {
		g, err := NewGapCounter([]float64{1, 2, 5}, c.every)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range c.rows {
			g.Add(r)
		}
		res := g.Result()
		if res.States != c.states || res.Actions != c.actions {
			t.Errorf("%s: %d states of %d actions, want %d of %d", c.name, res.States, res.Actions, c.states, c.actions)
		}
		for i, w := range c.within {
			if math.Abs(res.Within[i]-w) > 1e-12 {
				t.Errorf("%s: within %g: %v, want %v", c.name, res.Thresholds[i], res.Within[i], w)
			}
		}
		if res.P10 != c.p10 || res.Median != c.med || res.P90 != c.p90 {
			t.Errorf("%s: quantiles %v %v %v, want %v %v %v", c.name, res.P10, res.Median, res.P90, c.p10, c.med, c.p90)
		}
	}
	for _, bad := range []struct {
		th    []float64
		every int
	}{{nil, 1}, {[]float64{2, 1}, 1}, {[]float64{0, 1}, 1}, {[]float64{1}, 0}} {
		if _, err := NewGapCounter(bad.th, bad.every); err == nil {
			t.Errorf("thresholds %v every %d accepted", bad.th, bad.every)
		}
	}
	empty, _ := NewGapCounter([]float64{1}, 1)
	if s := empty.Result().String(); s != "no states" {
		t.Errorf("empty: %q", s)
	}
}
