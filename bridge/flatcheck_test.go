package bridge

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sparsepcl/sparsepcl/envs"
)

// slowFirstBad is the reference: ReadRow + Space.Check row by row.
func slowFirstBad(s envs.Space, a envs.Array, rows int) int {
	for r := range rows {
		v, err := envs.ReadRow(s, a, r)
		if err == nil {
			err = s.Check(v)
		}
		if err != nil {
			return r
		}
	}
	return -1
}

// TestFlatCheckerMatchesSpaceCheck compares the batch fast path with the per-row Check on random
// batches mixing members and near-misses (off by one, non-integral, NaN, ±Inf).
func TestFlatCheckerMatchesSpaceCheck(t *testing.T) {
	inf := math.Inf(1)
	cases := []struct {
		name  string
		space envs.Space
	}{
		{"discrete", envs.Discrete{N: 5, Start: -2}},
		{"box float32", envs.Box{Low: []float64{-1, 0}, High: []float64{1, inf}, Shape: []int{2}, Dtype: envs.Float32}},
		{"box int32", envs.Box{Low: []float64{-3}, High: []float64{3}, Shape: []int{1}, Dtype: envs.Int32}},
		{"multi discrete", envs.MultiDiscrete{Nvec: []int64{3, 4}, Start: []int64{1, -1}}},
		{"multi binary", envs.MultiBinary{N: 3}},
		{"tuple of discretes (algorithmic)", envs.Tuple{Spaces: []envs.Space{envs.Discrete{N: 2}, envs.Discrete{N: 2}, envs.Discrete{N: 5}}}},
		{"mixed tuple (float flat)", envs.Tuple{Spaces: []envs.Space{envs.Discrete{N: 5, Start: -2}, envs.Box{Low: []float64{-inf, 0}, High: []float64{1, inf}, Shape: []int{2}, Dtype: envs.Float32}, envs.MultiBinary{N: 2}}}},
		{"dict", envs.Dict{Spaces: map[string]envs.Space{"b": envs.Discrete{N: 3}, "a": envs.MultiDiscrete{Nvec: []int64{2, 2}}}}},
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fc, ok := newFlatChecker(tc.space)
			if !ok {
				t.Fatalf("no flat checker for %v", tc.space)
			}
			const rows = 6
			for trial := range 400 {
				a := envs.NewBatch(tc.space, rows)
				for r := range rows {
					if err := envs.WriteRow(tc.space, a, r, tc.space.Sample(rng)); err != nil {
						t.Fatal(err)
					}
				}
				// Spoil a few elements.
				for range rng.IntN(3) {
					i := rng.IntN(a.Len())
					if a.DType.IsFloat() {
						a.Floats[i] = []float64{a.Floats[i] + 1, a.Floats[i] - 1, a.Floats[i] + 0.5, math.NaN(), inf, -inf, 1e300}[rng.IntN(7)]
					} else {
						a.Ints[i] += []int64{1, -1, 7, math.MinInt64 / 2}[rng.IntN(4)]
					}
				}
				if got, want := fc.firstBad(a, rows), slowFirstBad(tc.space, a, rows); got != want {
					t.Fatalf("trial %d: fast path says first bad row %d, ReadRow+Check says %d (batch %v %v)", trial, got, want, a.Floats, a.Ints)
				}
			}
		})
	}
}
