package envs

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

var inf = math.Inf(1)

func testSpaces() map[string]Space {
	return map[string]Space{
		"discrete":      Discrete{N: 5},
		"discreteStart": Discrete{N: 3, Start: -2},
		"box":           Box{Low: []float64{-1, 0}, High: []float64{1, 2}, Shape: []int{2}, Dtype: Float32},
		"boxInf":        Box{Low: []float64{-inf, 0, -inf}, High: []float64{inf, inf, 3}, Shape: []int{3}, Dtype: Float64},
		"boxInt":        NewBox(-3, 3, Int64, 2, 2),
		"multiDiscrete": MultiDiscrete{Nvec: []int64{2, 3, 4}, Start: []int64{0, -1, 5}},
		"multiBinary":   MultiBinary{N: 4},
		"tuple":         Tuple{Spaces: []Space{Discrete{N: 2}, Discrete{N: 3, Start: 1}, MultiDiscrete{Nvec: []int64{2, 2}}}},
		"tupleMixed":    Tuple{Spaces: []Space{Discrete{N: 4}, NewBox(-1, 1, Float32, 2)}},
		"dict":          Dict{Spaces: map[string]Space{"z": Discrete{N: 3}, "a": NewBox(0, 1, Float64, 1), "m": MultiBinary{N: 2}}},
	}
}

func TestSpaceCheckSample(t *testing.T) {
	flat := map[string]int{"discrete": 1, "discreteStart": 1, "box": 2, "boxInf": 3, "boxInt": 4, "multiDiscrete": 3,
		"multiBinary": 4, "tuple": 4, "tupleMixed": 3, "dict": 4}
	dtypes := map[string]DType{"discrete": Int64, "discreteStart": Int64, "box": Float32, "boxInf": Float64, "boxInt": Int64,
		"multiDiscrete": Int64, "multiBinary": Int8, "tuple": Int64, "tupleMixed": Float64, "dict": Float64}
	for name, s := range testSpaces() {
		if s.FlatSize() != flat[name] || s.DType() != dtypes[name] {
			t.Errorf("%s: flat %d dtype %v, want %d %v", name, s.FlatSize(), s.DType(), flat[name], dtypes[name])
		}
		r1, r2 := rand.New(rand.NewPCG(3, 4)), rand.New(rand.NewPCG(3, 4))
		for range 200 {
			v := s.Sample(r1)
			if err := s.Check(v); err != nil {
				t.Fatalf("%s: sample %v: %v", name, v, err)
			}
			if w := s.Sample(r2); !reflect.DeepEqual(v, w) {
				t.Fatalf("%s: same seed, samples %v and %v", name, v, w)
			}
		}
	}
	// Discrete with start covers exactly [start, start+n)
	seen := map[int64]bool{}
	rng := rand.New(rand.NewPCG(1, 1))
	for range 300 {
		seen[Discrete{N: 3, Start: -2}.Sample(rng).(int64)] = true
	}
	if len(seen) != 3 || !seen[-2] || !seen[0] {
		t.Errorf("Discrete(3, start=-2) samples %v", seen)
	}
}

func TestSpaceCheckRejects(t *testing.T) {
	sp := testSpaces()
	tests := []struct {
		space string
		v     any
		want  string
	}{
		{"discrete", int64(5), "out of range"},
		{"discrete", 3, "want int64"},
		{"discreteStart", int64(-3), "out of range"},
		{"discreteStart", int64(1), "out of range"},
		{"box", []float64{0, 2.5}, "element 1"},
		{"box", []float64{0}, "1 elements"},
		{"box", []float64{math.NaN(), 0}, "element 0"},
		{"boxInf", []float64{-1e300, 1e300, -inf}, ""},
		{"boxInf", []float64{0, -1, 0}, "element 1"},
		{"boxInt", []float64{0, 1, 2, 0.5}, "not integral"},
		{"multiDiscrete", []int64{0, -2, 5}, "element 1"},
		{"multiBinary", []int64{0, 1, 2, 0}, "not 0 or 1"},
		{"tuple", []any{int64(1), int64(0), []int64{0, 0}}, "component 1"},
		{"tuple", []any{int64(1)}, "1 components"},
		{"dict", map[string]any{"z": int64(0), "a": []float64{0.5}, "n": []int64{0, 1}}, `no key "m"`},
		{"dict", map[string]any{"z": int64(3), "a": []float64{0.5}, "m": []int64{0, 1}}, `entry "z"`},
	}
	for _, tc := range tests {
		err := sp[tc.space].Check(tc.v)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s %v: %v", tc.space, tc.v, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: error %v, want %q", tc.space, tc.v, err, tc.want)
		}
	}
}

// TestRowRoundTrip writes samples of every space kind into batch rows and reads them back.
func TestRowRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for name, s := range testSpaces() {
		const n = 4
		a := NewBatch(s, n)
		if a.Rows() != n || a.RowSize() != s.FlatSize() || a.Validate() != nil {
			t.Fatalf("%s: batch %v", name, a.Shape)
		}
		vals := make([]any, n)
		for i := range vals {
			vals[i] = s.Sample(rng)
			if err := WriteRow(s, a, i, vals[i]); err != nil {
				t.Fatalf("%s row %d: %v", name, i, err)
			}
		}
		for i := range vals {
			got, err := ReadRow(s, a, i)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, vals[i]) {
				t.Fatalf("%s row %d: wrote %v, read %v", name, i, vals[i], got)
			}
		}
	}
	// canonical order: tuple components in order, dict entries by sorted key
	tup := testSpaces()["tuple"]
	a := NewBatch(tup, 1)
	WriteRow(tup, a, 0, []any{int64(1), int64(3), []int64{0, 1}})
	if !reflect.DeepEqual(a.Ints, []int64{1, 3, 0, 1}) {
		t.Errorf("tuple row %v", a.Ints)
	}
	d := testSpaces()["dict"]
	b := NewBatch(d, 1)
	WriteRow(d, b, 0, map[string]any{"z": int64(2), "a": []float64{0.25}, "m": []int64{1, 0}})
	if !reflect.DeepEqual(b.Floats, []float64{0.25, 1, 0, 2}) {
		t.Errorf("dict row %v (want a, m, z)", b.Floats)
	}
}

func TestRowErrors(t *testing.T) {
	s := Discrete{N: 3}
	a := NewBatch(s, 2)
	if err := WriteRow(s, a, 2, int64(0)); err == nil || !strings.Contains(err.Error(), "row 2") {
		t.Errorf("row out of range: %v", err)
	}
	if err := WriteRow(s, a, 0, int64(3)); err == nil {
		t.Error("non-member written")
	}
	if err := WriteRow(s, NewArray(Float32, 2), 0, int64(1)); err == nil {
		t.Error("int value into a float array")
	}
	if err := WriteRow(s, NewArray(Int64, 2, 2), 0, int64(1)); err == nil {
		t.Error("row size mismatch")
	}
	tm := testSpaces()["tupleMixed"]
	f := NewBatch(tm, 1)
	f.Floats[0] = 1.5
	if _, err := ReadRow(tm, f, 0); err == nil {
		t.Error("non-integral discrete read back")
	}
}

func TestMixedRadix(t *testing.T) {
	r, err := NewMixedRadix(2, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	d := make([]int64, 3)
	for i := range r.Size() {
		if err := r.Split(i, d); err != nil {
			t.Fatal(err)
		}
		if d[0] != i%2 || d[1] != (i/2)%3 || d[2] != i/6 {
			t.Fatalf("%d -> %v", i, d)
		}
		if back, err := r.Combine(d); err != nil || back != i {
			t.Fatalf("%d -> %v -> %d", i, d, back)
		}
	}
	for _, bad := range [][]int64{{}, {0}, {2, -1}, {1 << 32, 1 << 32}} {
		if _, err := NewMixedRadix(bad...); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	if err := r.Split(24, d); err == nil {
		t.Error("index 24 accepted")
	}
	if _, err := r.Combine([]int64{0, 3, 0}); err == nil {
		t.Error("digit 3 accepted")
	}
}

func TestOptions(t *testing.T) {
	o := map[string]any{"a": 3, "b": 4.0, "c": 2.5, "d": true, "e": "disabled", "f": AutoresetNextStep, "g": "x"}
	if v, err := OptionInt(o, "a", 0); v != 3 || err != nil {
		t.Error(v, err)
	}
	if v, err := OptionInt(o, "b", 0); v != 4 || err != nil {
		t.Error(v, err)
	}
	if _, err := OptionInt(o, "c", 0); err == nil {
		t.Error("2.5 accepted")
	}
	if v, _ := OptionInt(o, "missing", 7); v != 7 {
		t.Error(v)
	}
	if _, err := OptionBool(o, "a", false); err == nil {
		t.Error("int as bool")
	}
	if m, err := OptionAutoreset(o, "e", AutoresetNextStep); m != AutoresetDisabled || err != nil {
		t.Error(m, err)
	}
	if m, err := OptionAutoreset(o, "f", AutoresetDisabled); m != AutoresetNextStep || err != nil {
		t.Error(m, err)
	}
	if _, err := OptionAutoreset(o, "g", AutoresetNextStep); err == nil {
		t.Error("bad mode accepted")
	}
	if err := CheckOptionKeys(o, "a", "b"); err == nil || !strings.Contains(err.Error(), `"c"`) {
		t.Error(err)
	}
}

func TestRegistry(t *testing.T) {
	r := NewRegistry()
	mk := func(map[string]any) (Env, error) { return nil, nil }
	if err := r.Register("A-v0", Factory{Make: mk}); err != nil {
		t.Fatal(err)
	}
	if err := r.Register("A-v0", Factory{Make: mk}); err == nil {
		t.Error("duplicate id accepted")
	}
	if err := r.Register("", Factory{Make: mk}); err == nil {
		t.Error("empty id accepted")
	}
	if err := r.Register("B-v0", Factory{}); err == nil {
		t.Error("factory without Make accepted")
	}
	if _, err := r.Make("C-v0", nil); err == nil || !strings.Contains(err.Error(), "A-v0") {
		t.Errorf("unknown id error should list known ids: %v", err)
	}
	if _, err := r.MakeVec("A-v0", 2, nil); err == nil || !strings.Contains(err.Error(), "no vectorised") {
		t.Errorf("missing MakeVec: %v", err)
	}
	if _, err := r.MakeVec("A-v0", 0, nil); err == nil {
		t.Error("0 copies accepted")
	}
}
