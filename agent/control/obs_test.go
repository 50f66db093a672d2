package control

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
		{"dict", envs.Dict{Spaces: map[string]envs.Space{"a": envs.Discrete{N: 2}}}, 0, "not supported"},
		{"multi-binary", envs.MultiBinary{N: 3}, 0, "not supported"},
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
