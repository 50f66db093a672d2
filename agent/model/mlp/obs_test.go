package mlp

import (
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/envs"
)

func TestNewEncoder(t *testing.T) {
	cases := []struct {
		name    string
		space   envs.Space
		dim     int
		wantErr string
	}{
		{"box vector", envs.NewBox(-1, 1, envs.Float64, 17), 17, ""},
		{"discrete one-hot", envs.Discrete{N: 5, Start: -2}, 5, ""},
		{"image", envs.NewBox(0, 255, envs.Float32, 8, 8, 3), 0, "not images"},
		{"dict", envs.Dict{Spaces: map[string]envs.Space{"a": envs.Discrete{N: 2}, "b": envs.NewBox(0, 1, envs.Float32, 3)}}, 5, ""},
		{"multi-binary", envs.MultiBinary{N: 3}, 3, ""},
		{"multi-discrete", envs.MultiDiscrete{Nvec: []int64{3, 4}}, 7, ""},
		{"tuple", envs.Tuple{Spaces: []envs.Space{envs.Discrete{N: 32}, envs.Discrete{N: 11}, envs.Discrete{N: 2}}}, 45, ""},
		{"nested", envs.Tuple{Spaces: []envs.Space{envs.Discrete{N: 2}, envs.Tuple{Spaces: []envs.Space{envs.Discrete{N: 2}}}}}, 0, "component 1: Tuple(Discrete(2)) is nested"},
		{"image in a dict", envs.Dict{Spaces: map[string]envs.Space{"img": envs.NewBox(0, 255, envs.Uint8, 4, 4)}}, 0, `entry "img": Box`},
		{"empty tuple", envs.Tuple{}, 0, "no parts"},
		{"huge discrete in a tuple", envs.Tuple{Spaces: []envs.Space{envs.Discrete{N: 1 << 20}}}, 0, "1 <= n <= 65536"},
	}
	for _, tc := range cases {
		enc, err := NewEncoder(tc.space)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if enc.Dim() != tc.dim {
			t.Errorf("%s: dim %d, want %d", tc.name, enc.Dim(), tc.dim)
		}
	}
	enc, _ := NewEncoder(envs.Discrete{N: 3, Start: 1})
	obs := envs.NewArray(envs.Int64, 2)
	obs.Ints[0], obs.Ints[1] = 2, 7
	dst := make([]float32, 3)
	if err := enc.Encode(dst, obs, 0); err != nil || dst[1] != 1 || dst[0] != 0 || dst[2] != 0 {
		t.Errorf("one-hot of 2 in Discrete(3, start=1): %v, %v", dst, err)
	}
	if err := enc.Encode(dst, obs, 1); err == nil {
		t.Error("observation 7 outside Discrete(3, start=1): no error")
	}
	box, _ := NewEncoder(envs.NewBox(-1, 1, envs.Float64, 2))
	bad := envs.NewArray(envs.Float64, 1, 2)
	bad.Floats[1] = nan()
	if err := box.Encode(dst[:2], bad, 0); err == nil {
		t.Error("NaN observation: no error")
	}
}

func nan() float64 {
	var zero float64
	return zero / zero
}

// Composite observations are flattened as gymnasium.spaces.flatten does: parts in order (a Dict's
// by sorted key), Discrete and MultiDiscrete elements one-hot from their start, Box and MultiBinary
// values as they are; the row is read from Ints or Floats by the array's dtype.
func TestFlatEncoder(t *testing.T) {
	dict := envs.Dict{Spaces: map[string]envs.Space{
		"pos": envs.NewBox(-2, 3, envs.Float32, 2), "goal": envs.Discrete{N: 3, Start: -1},
		"cells": envs.MultiDiscrete{Nvec: []int64{2, 3}, Start: []int64{1, -1}}, "bits": envs.MultiBinary{N: 2},
	}} // sorted: bits, cells, goal, pos
	tuple := envs.Tuple{Spaces: []envs.Space{envs.Discrete{N: 3}, envs.Discrete{N: 2, Start: 1}}}
	cases := []struct {
		name  string
		space envs.Space
		dtype envs.DType
		row   []float64
		want  []float32
		err   string
	}{
		{"dict", dict, envs.Float64, []float64{1, 0, 2, 1, 0, 0.5, -1.25}, []float32{1, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0.5, -1.25}, ""},
		{"tuple of ints", tuple, envs.Int64, []float64{2, 1}, []float32{0, 0, 1, 1, 0}, ""},
		{"multi-binary", envs.MultiBinary{N: 3}, envs.Int8, []float64{1, 0, 1}, []float32{1, 0, 1}, ""},
		{"out of range", tuple, envs.Int64, []float64{3, 1}, nil, "component 0 is 3, outside 3 values from 0"},
		{"below start", tuple, envs.Int64, []float64{0, 0}, nil, "component 1 is 0, outside 2 values from 1"},
		{"fractional", dict, envs.Float64, []float64{1, 0, 2, 1, 0.5, 0.5, -1.25}, nil, `entry "goal" is 0.5`},
		{"NaN in a box", dict, envs.Float64, []float64{1, 0, 2, 1, 0, nan(), 0}, nil, `entry "pos", element 0`},
	}
	for _, tc := range cases {
		enc, err := NewEncoder(tc.space)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		obs := envs.NewArray(tc.dtype, 2, len(tc.row)) // row 1 holds the case; row 0 stays zero
		for i, v := range tc.row {
			if tc.dtype.IsFloat() {
				obs.Floats[len(tc.row)+i] = v
			} else {
				obs.Ints[len(tc.row)+i] = int64(v)
			}
		}
		dst := make([]float32, enc.Dim())
		for i := range dst {
			dst[i] = 9 // stale values must be overwritten
		}
		err = enc.Encode(dst, obs, 1)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(dst) != len(tc.want) {
			t.Fatalf("%s: %d inputs, want %d", tc.name, len(dst), len(tc.want))
		}
		for i := range dst {
			if dst[i] != tc.want[i] {
				t.Errorf("%s: %v, want %v", tc.name, dst, tc.want)
				break
			}
		}
	}
}
