package envs

import (
	"fmt"
	"iter"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// Space describes the values an observation or action can take.
//
// Canonical value types of a single copy: Discrete int64; Box []float64 (row-major, len = product of
// the shape, whatever the dtype); MultiDiscrete and MultiBinary []int64; Tuple []any; Dict
// map[string]any. In a batch Array a value is flattened to FlatSize elements of DType, in the order of
// the value (Tuple components in order, Dict entries by sorted key).
type Space interface {
	// Check returns nil when v is a member of the space, or an error that says why it is not.
	Check(v any) error
	// Sample draws a uniformly random member (Box: uniform on finite bounds; see Box.Sample).
	Sample(rng *rand.Rand) any
	// FlatSize is the number of elements one value occupies in a batch row.
	FlatSize() int
	// DType is the element type of a batch row.
	DType() DType
	String() string
}

// Contains reports whether v is a member of s.
func Contains(s Space, v any) bool { return s.Check(v) == nil }

// Discrete is the integers start, start+1, ..., start+n-1.
type Discrete struct {
	N     int64
	Start int64
}

func (d Discrete) Check(v any) error {
	x, ok := v.(int64)
	if !ok {
		return fmt.Errorf("%v: value %v is a %T, want int64", d, v, v)
	}
	if x < d.Start || x >= d.Start+d.N {
		return fmt.Errorf("%v: value %d out of range [%d, %d)", d, x, d.Start, d.Start+d.N)
	}
	return nil
}
func (d Discrete) Sample(rng *rand.Rand) any { return d.Start + rng.Int64N(d.N) }
func (d Discrete) FlatSize() int             { return 1 }
func (d Discrete) DType() DType              { return Int64 }
func (d Discrete) String() string {
	if d.Start != 0 {
		return fmt.Sprintf("Discrete(%d, start=%d)", d.N, d.Start)
	}
	return fmt.Sprintf("Discrete(%d)", d.N)
}

// Box is a (possibly unbounded) box in R^n with per-element bounds; Low and High have one entry per
// element of Shape (row-major). Integer dtypes hold integral values.
type Box struct {
	Low, High []float64
	Shape     []int
	Dtype     DType
}

// NewBox builds a Box with the same bounds on every element.
func NewBox(low, high float64, dtype DType, shape ...int) Box {
	n := 1
	for _, s := range shape {
		n *= s
	}
	b := Box{Low: make([]float64, n), High: make([]float64, n), Shape: append([]int(nil), shape...), Dtype: dtype}
	for i := range n {
		b.Low[i], b.High[i] = low, high
	}
	return b
}

// Validate checks the descriptor itself.
func (b Box) Validate() error {
	n := b.FlatSize()
	if len(b.Low) != n || len(b.High) != n {
		return fmt.Errorf("box of shape %v needs %d bounds, has %d low and %d high", b.Shape, n, len(b.Low), len(b.High))
	}
	if !b.Dtype.Valid() {
		return fmt.Errorf("box has invalid dtype %d", b.Dtype)
	}
	for i := range n {
		if math.IsNaN(b.Low[i]) || math.IsNaN(b.High[i]) || b.Low[i] > b.High[i] {
			return fmt.Errorf("box element %d has bounds [%v, %v]", i, b.Low[i], b.High[i])
		}
	}
	return nil
}

func (b Box) Check(v any) error {
	x, ok := v.([]float64)
	if !ok {
		return fmt.Errorf("%v: value is a %T, want []float64", b, v)
	}
	if len(x) != b.FlatSize() {
		return fmt.Errorf("%v: value has %d elements, want %d", b, len(x), b.FlatSize())
	}
	for i, xi := range x {
		if math.IsNaN(xi) || xi < b.Low[i] || xi > b.High[i] {
			return fmt.Errorf("%v: element %d = %v outside [%v, %v]", b, i, xi, b.Low[i], b.High[i])
		}
		if !b.Dtype.IsFloat() && xi != math.Trunc(xi) {
			return fmt.Errorf("%v: element %d = %v is not integral", b, i, xi)
		}
	}
	return nil
}

// Sample draws each element as Gymnasium does: uniform on [low, high], exponential beyond a finite
// bound, normal when both bounds are infinite; integer dtypes round down.
func (b Box) Sample(rng *rand.Rand) any {
	x := make([]float64, b.FlatSize())
	for i := range x {
		lo, hi := b.Low[i], b.High[i]
		switch {
		case !math.IsInf(lo, 0) && !math.IsInf(hi, 0):
			x[i] = lo + rng.Float64()*(hi-lo)
		case math.IsInf(lo, 0) && math.IsInf(hi, 0):
			x[i] = rng.NormFloat64()
		case math.IsInf(hi, 0):
			x[i] = lo + rng.ExpFloat64()
		default:
			x[i] = hi - rng.ExpFloat64()
		}
		if !b.Dtype.IsFloat() {
			x[i] = math.Min(math.Max(math.Floor(x[i]), lo), hi)
		}
	}
	return x
}
func (b Box) FlatSize() int {
	n := 1
	for _, s := range b.Shape {
		n *= s
	}
	return n
}
func (b Box) DType() DType { return b.Dtype }
func (b Box) String() string {
	lo, hi := "", ""
	if n := len(b.Low); n > 0 && slices.Equal(b.Low, slices.Repeat(b.Low[:1], n)) && slices.Equal(b.High, slices.Repeat(b.High[:1], n)) {
		lo, hi = fmt.Sprint(b.Low[0]), fmt.Sprint(b.High[0])
	} else {
		lo, hi = fmt.Sprint(b.Low), fmt.Sprint(b.High)
	}
	return fmt.Sprintf("Box(%s, %s, %v, %s)", lo, hi, b.Shape, b.Dtype)
}

// MultiDiscrete is a vector of independent discrete values: element i in [Start[i], Start[i]+Nvec[i]).
// A nil Start means all zeros.
type MultiDiscrete struct {
	Nvec  []int64
	Start []int64
}

func (m MultiDiscrete) start(i int) int64 {
	if m.Start == nil {
		return 0
	}
	return m.Start[i]
}

func (m MultiDiscrete) Check(v any) error {
	x, ok := v.([]int64)
	if !ok {
		return fmt.Errorf("%v: value is a %T, want []int64", m, v)
	}
	if len(x) != len(m.Nvec) {
		return fmt.Errorf("%v: value has %d elements, want %d", m, len(x), len(m.Nvec))
	}
	for i, xi := range x {
		if s := m.start(i); xi < s || xi >= s+m.Nvec[i] {
			return fmt.Errorf("%v: element %d = %d out of range [%d, %d)", m, i, xi, s, s+m.Nvec[i])
		}
	}
	return nil
}
func (m MultiDiscrete) Sample(rng *rand.Rand) any {
	x := make([]int64, len(m.Nvec))
	for i, n := range m.Nvec {
		x[i] = m.start(i) + rng.Int64N(n)
	}
	return x
}
func (m MultiDiscrete) FlatSize() int  { return len(m.Nvec) }
func (m MultiDiscrete) DType() DType   { return Int64 }
func (m MultiDiscrete) String() string { return fmt.Sprintf("MultiDiscrete(%v)", m.Nvec) }

// MultiBinary is a vector of n independent bits.
type MultiBinary struct{ N int }

func (m MultiBinary) Check(v any) error {
	x, ok := v.([]int64)
	if !ok {
		return fmt.Errorf("%v: value is a %T, want []int64", m, v)
	}
	if len(x) != m.N {
		return fmt.Errorf("%v: value has %d elements, want %d", m, len(x), m.N)
	}
	for i, xi := range x {
		if xi != 0 && xi != 1 {
			return fmt.Errorf("%v: element %d = %d is not 0 or 1", m, i, xi)
		}
	}
	return nil
}
func (m MultiBinary) Sample(rng *rand.Rand) any {
	x := make([]int64, m.N)
	for i := range x {
		x[i] = rng.Int64N(2)
	}
	return x
}
func (m MultiBinary) FlatSize() int  { return m.N }
func (m MultiBinary) DType() DType   { return Int8 }
func (m MultiBinary) String() string { return fmt.Sprintf("MultiBinary(%d)", m.N) }

// Tuple is an ordered product of spaces.
type Tuple struct{ Spaces []Space }

func (t Tuple) Check(v any) error {
	x, ok := v.([]any)
	if !ok {
		return fmt.Errorf("%v: value is a %T, want []any", t, v)
	}
	if len(x) != len(t.Spaces) {
		return fmt.Errorf("%v: value has %d components, want %d", t, len(x), len(t.Spaces))
	}
	for i, s := range t.Spaces {
		if err := s.Check(x[i]); err != nil {
			return fmt.Errorf("tuple component %d: %w", i, err)
		}
	}
	return nil
}
func (t Tuple) Sample(rng *rand.Rand) any {
	x := make([]any, len(t.Spaces))
	for i, s := range t.Spaces {
		x[i] = s.Sample(rng)
	}
	return x
}
func (t Tuple) FlatSize() int { return flatSizeOf(slices.Values(t.Spaces)) }
func (t Tuple) DType() DType  { return commonDType(t.Spaces) }
func (t Tuple) String() string {
	parts := make([]string, len(t.Spaces))
	for i, s := range t.Spaces {
		parts[i] = s.String()
	}
	return "Tuple(" + strings.Join(parts, ", ") + ")"
}

// Dict is a product of named spaces; its canonical order is by sorted key, as in Gymnasium.
type Dict struct{ Spaces map[string]Space }

// Keys returns the keys in canonical (sorted) order.
func (d Dict) Keys() []string {
	keys := make([]string, 0, len(d.Spaces))
	for k := range d.Spaces {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (d Dict) Check(v any) error {
	x, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%v: value is a %T, want map[string]any", d, v)
	}
	if len(x) != len(d.Spaces) {
		return fmt.Errorf("%v: value has %d entries, want %d", d, len(x), len(d.Spaces))
	}
	for _, k := range d.Keys() {
		xv, ok := x[k]
		if !ok {
			return fmt.Errorf("%v: value has no key %q", d, k)
		}
		if err := d.Spaces[k].Check(xv); err != nil {
			return fmt.Errorf("dict entry %q: %w", k, err)
		}
	}
	return nil
}
func (d Dict) Sample(rng *rand.Rand) any {
	x := make(map[string]any, len(d.Spaces))
	for _, k := range d.Keys() {
		x[k] = d.Spaces[k].Sample(rng)
	}
	return x
}
func (d Dict) FlatSize() int { return flatSizeOf(maps.Values(d.Spaces)) }
func (d Dict) DType() DType {
	spaces := make([]Space, 0, len(d.Spaces))
	for _, k := range d.Keys() {
		spaces = append(spaces, d.Spaces[k])
	}
	return commonDType(spaces)
}
func (d Dict) String() string {
	parts := make([]string, 0, len(d.Spaces))
	for _, k := range d.Keys() {
		parts = append(parts, fmt.Sprintf("%q: %v", k, d.Spaces[k]))
	}
	return "Dict(" + strings.Join(parts, ", ") + ")"
}

// flatSizeOf is the flat size of a product of spaces: the sum of theirs.
func flatSizeOf(spaces iter.Seq[Space]) int {
	n := 0
	for s := range spaces {
		n += s.FlatSize()
	}
	return n
}

// commonDType is the leaves' dtype when they all agree, float64 otherwise (it holds every value exactly
// for the dtypes supported here).
func commonDType(spaces []Space) DType {
	if len(spaces) == 0 {
		return Float64
	}
	d := spaces[0].DType()
	for _, s := range spaces[1:] {
		if s.DType() != d {
			return Float64
		}
	}
	return d
}
