package classic

import (
	"encoding/json"
	"math"
	"math/big"
	"os"
	"testing"
)

// TestFloat32TrigTable compares cosF32 and sinF32 with numpy's np.cos and np.sin of float32 values
// (testdata/f32trig.json, written by testdata/gen_f32trig.py), bit for bit. The table's inputs are
// drawn from Acrobot's reset range and far beyond it.
func TestFloat32TrigTable(t *testing.T) {
	b, err := os.ReadFile("testdata/f32trig.json")
	if err != nil {
		t.Fatal(err)
	}
	var tab struct {
		Numpy string      `json:"numpy"`
		Rows  [][3]uint32 `json:"rows"` // float32 bits of x, cos(x), sin(x)
	}
	if err := json.Unmarshal(b, &tab); err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) < 1000 {
		t.Fatalf("%d rows", len(tab.Rows))
	}
	for _, r := range tab.Rows {
		x := math.Float32frombits(r[0])
		if !LibmIdentical && math.Abs(float64(x)) > float64(f32MaxCodyCos) {
			continue // numpy uses the C library's cosf/sinf there; without cgo so does Go's math, differently
		}
		if c := cosF32(x); math.Float32bits(c) != r[1] && !(c != c && math.Float32frombits(r[1]) != math.Float32frombits(r[1])) {
			t.Fatalf("cos(%v) = %v, numpy %v", x, c, math.Float32frombits(r[1]))
		}
		if s := sinF32(x); math.Float32bits(s) != r[2] && !(s != s && math.Float32frombits(r[2]) != math.Float32frombits(r[2])) {
			t.Fatalf("sin(%v) = %v, numpy %v", x, s, math.Float32frombits(r[2]))
		}
	}
}

// TestFMA32 checks fma32 against the exactly rounded a*b+c, including sums that land exactly halfway
// between two float32 values in float64.
func TestFMA32(t *testing.T) {
	exact := func(a, b, c float32) float32 {
		x := new(big.Float).SetPrec(200).SetFloat64(float64(a))
		x.Mul(x, new(big.Float).SetFloat64(float64(b)))
		x.Add(x, new(big.Float).SetFloat64(float64(c)))
		f, _ := x.Float32()
		return f
	}
	cases := [][3]float32{
		{1, 1, 1},
		{1 + 0x1p-23, 1 + 0x1p-23, -1},       // product needs more than 24 bits
		{1 + 0x1p-12, 1 + 0x1p-12, 0x1p-48},  // a*b + c is a float32 midpoint plus a hair
		{1 + 0x1p-12, 1 + 0x1p-12, -0x1p-48}, // ... minus a hair
		{1 + 0x1p-12, 1 + 0x1p-12, 0x1p-100}, // the hair is below float64 precision
		{0x1.45f306p-1, 3.5, 0x1.800000p+23}, // the quadrant of the kernel
		{-0x1.921fb0p+00, 1234, 1938.5},      // a reduction step
		{3.4028235e38, 2, -3.4028235e38},     // overflow in float32 only
		{float32(math.Inf(1)), 1, 0},
	}
	for _, c := range cases {
		got, want := fma32(c[0], c[1], c[2]), exact(c[0], c[1], c[2])
		if math.Float32bits(got) != math.Float32bits(want) && !(math.IsInf(float64(got), 0) && math.IsInf(float64(want), 0)) {
			t.Errorf("fma32(%v, %v, %v) = %v, exact %v", c[0], c[1], c[2], got, want)
		}
	}
}
