package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"

	"github.com/sparsepcl/sparsepcl/envs"
)

// Array is an array on the wire: raw little-endian bytes with an explicit dtype and shape.
type Array struct {
	DType string `msgpack:"dtype"`
	Shape []int  `msgpack:"shape"`
	Data  []byte `msgpack:"data"`
}

// ItemSize is the bytes of one value of dtype d on the wire.
func ItemSize(d envs.DType) int {
	switch d {
	case envs.Int64, envs.Float64:
		return 8
	case envs.Int32, envs.Float32:
		return 4
	default:
		return 1
	}
}

// EncodeArray packs the row-major values of a (already validated) into wire bytes of dtype d.
func EncodeArray(a envs.Array, d envs.DType, shape []int) Array {
	buf := make([]byte, a.Len()*ItemSize(d))
	putValues(buf, a, d)
	return Array{DType: d.String(), Shape: shape, Data: buf}
}

// CheckArray validates a received array's dtype, shape and byte count.
func CheckArray(w *Array, what string, want envs.DType, shape []int) error {
	d, err := envs.ParseDType(w.DType)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if d != want {
		return fmt.Errorf("%s: dtype %s, want %s", what, d, want)
	}
	if len(w.Shape) != len(shape) {
		return fmt.Errorf("%s: shape %v, want %v", what, w.Shape, shape)
	}
	n := 1
	for i := range shape {
		if w.Shape[i] != shape[i] {
			return fmt.Errorf("%s: shape %v, want %v", what, w.Shape, shape)
		}
		// Checked product: a peer-sent shape such as [2^21, 2^21, 2^21, 2^21] must not wrap
		// around to a small element count that happens to match len(w.Data).
		if shape[i] < 0 || (shape[i] > 0 && n > len(w.Data)/shape[i]) {
			return fmt.Errorf("%s: shape %v does not fit %d bytes", what, w.Shape, len(w.Data))
		}
		n *= shape[i]
	}
	if len(w.Data) != n*ItemSize(d) {
		return fmt.Errorf("%s: %d bytes for shape %v of %s", what, len(w.Data), shape, d)
	}
	return nil
}

// DecodeInto writes a checked array's values into dst (floats or ints, as its dtype says).
func DecodeInto(w *Array, d envs.DType, floats []float64, ints []int64) {
	b := w.Data
	switch d {
	case envs.Float64:
		for i := range floats {
			floats[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
	case envs.Float32:
		for i := range floats {
			floats[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		}
	case envs.Int64:
		for i := range ints {
			ints[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
		}
	case envs.Int32:
		for i := range ints {
			ints[i] = int64(int32(binary.LittleEndian.Uint32(b[4*i:])))
		}
	case envs.Int8:
		for i := range ints {
			ints[i] = int64(int8(b[i]))
		}
	default: // uint8, bool
		for i := range ints {
			ints[i] = int64(b[i])
		}
	}
}

// DecodeArray turns any well-formed wire array into an envs.Array (used for space bounds and infos).
func DecodeArray(w *Array, what string) (envs.Array, error) {
	d, err := envs.ParseDType(w.DType)
	if err != nil {
		return envs.Array{}, fmt.Errorf("%s: %w", what, err)
	}
	for _, s := range w.Shape {
		if s < 0 || s > len(w.Data) {
			return envs.Array{}, fmt.Errorf("%s: bad shape %v", what, w.Shape)
		}
	}
	if err := CheckArray(w, what, d, w.Shape); err != nil {
		return envs.Array{}, err
	}
	a := envs.NewArray(d, w.Shape...)
	DecodeInto(w, d, a.Floats, a.Ints)
	return a, nil
}

// Space describes a space; which fields are set depends on Kind.
type Space struct {
	Kind   string   `msgpack:"kind"`
	N      int64    `msgpack:"n"`
	Start  int64    `msgpack:"start"`
	Shape  []int    `msgpack:"shape"`
	DType  string   `msgpack:"dtype"`
	Low    *Array   `msgpack:"low"`
	High   *Array   `msgpack:"high"`
	Nvec   *Array   `msgpack:"nvec"`
	Starts *Array   `msgpack:"starts"`
	Spaces []Space  `msgpack:"spaces"`
	Keys   []string `msgpack:"keys"`
}

const maxSpaceDepth = 32

// ToSpace turns a space description into an envs.Space, refusing what is malformed, nested deeper
// than maxSpaceDepth or inconsistent.
func (w *Space) ToSpace() (envs.Space, error) { return w.toSpace(0) }

func (w *Space) toSpace(depth int) (envs.Space, error) {
	if depth > maxSpaceDepth {
		return nil, fmt.Errorf("space nested deeper than %d", maxSpaceDepth)
	}
	switch w.Kind {
	case "discrete":
		if w.N <= 0 {
			return nil, fmt.Errorf("discrete space with n = %d", w.N)
		}
		return envs.Discrete{N: w.N, Start: w.Start}, nil
	case "box":
		d, err := envs.ParseDType(w.DType)
		if err != nil {
			return nil, fmt.Errorf("box: %w", err)
		}
		lo, hi, err := decodeBoth(w.Low, w.High, "box low", "box high", "box without bounds")
		if err != nil {
			return nil, err
		}
		// A checked product: a shape such as [2^32, 2^32] must not wrap around to the bounds' length.
		n := 1
		for _, k := range w.Shape {
			if k < 0 || k > math.MaxInt32 || (k > 0 && n > len(lo.Floats)/k) {
				return nil, fmt.Errorf("box of shape %v with %d bounds", w.Shape, len(lo.Floats))
			}
			n *= k
		}
		b := envs.Box{Low: lo.Floats, High: hi.Floats, Shape: w.Shape, Dtype: d}
		if b.Shape == nil {
			b.Shape = []int{}
		}
		if err := b.Validate(); err != nil {
			return nil, fmt.Errorf("box: %w", err)
		}
		return b, nil
	case "multi_discrete":
		nv, st, err := decodeBoth(w.Nvec, w.Starts, "nvec", "starts", "multi_discrete without nvec or starts")
		if err != nil {
			return nil, err
		}
		if len(nv.Ints) != len(st.Ints) {
			return nil, fmt.Errorf("multi_discrete with %d nvec and %d starts", len(nv.Ints), len(st.Ints))
		}
		return envs.MultiDiscrete{Nvec: nv.Ints, Start: st.Ints}, nil
	case "multi_binary":
		if w.N < 0 || w.N > math.MaxInt32 {
			return nil, fmt.Errorf("multi_binary with n = %d", w.N)
		}
		return envs.MultiBinary{N: int(w.N)}, nil
	case "tuple":
		t := envs.Tuple{Spaces: make([]envs.Space, len(w.Spaces))}
		for i := range w.Spaces {
			s, err := w.Spaces[i].toSpace(depth + 1)
			if err != nil {
				return nil, fmt.Errorf("tuple component %d: %w", i, err)
			}
			t.Spaces[i] = s
		}
		return t, nil
	case "dict":
		if len(w.Keys) != len(w.Spaces) {
			return nil, fmt.Errorf("dict with %d keys and %d spaces", len(w.Keys), len(w.Spaces))
		}
		d := envs.Dict{Spaces: make(map[string]envs.Space, len(w.Keys))}
		for i, k := range w.Keys {
			s, err := w.Spaces[i].toSpace(depth + 1)
			if err != nil {
				return nil, fmt.Errorf("dict entry %q: %w", k, err)
			}
			d.Spaces[k] = s
		}
		return d, nil
	default:
		return nil, fmt.Errorf("unknown space kind %q", w.Kind)
	}
}

// decodeBoth decodes the two arrays that describe a space (a Box's bounds, a MultiDiscrete's nvec
// and starts), refusing with missing when either is absent.
func decodeBoth(a, b *Array, aName, bName, missing string) (envs.Array, envs.Array, error) {
	if a == nil || b == nil {
		return envs.Array{}, envs.Array{}, errors.New(missing)
	}
	x, err := DecodeArray(a, aName)
	if err != nil {
		return envs.Array{}, envs.Array{}, err
	}
	y, err := DecodeArray(b, bName)
	if err != nil {
		return envs.Array{}, envs.Array{}, err
	}
	return x, y, nil
}

// PlainInfo converts a decoded info map: wire arrays become envs.Array, everything else stays.
func PlainInfo(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if d, ok := x["dtype"].(string); ok && len(x) == 3 {
			if data, ok := x["data"].([]byte); ok {
				if shape, ok := x["shape"].([]any); ok {
					w := Array{DType: d, Data: data}
					for _, s := range shape {
						w.Shape = append(w.Shape, int(toInt64(s)))
					}
					if a, err := DecodeArray(&w, "info array"); err == nil {
						return a
					}
				}
			}
		}
		for k, e := range x {
			x[k] = PlainInfo(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = PlainInfo(e)
		}
		return x
	default:
		return v
	}
}

// toInt64 is an integer of any of the types msgpack decodes integers to, as an int64 (a uint64
// beyond MaxInt64 wraps, as a conversion does); anything else is -1, which no shape accepts.
func toInt64(v any) int64 {
	switch x := v.(type) {
	case int8, int16, int32, int64:
		return reflect.ValueOf(x).Int()
	case uint8, uint16, uint32, uint64:
		return int64(reflect.ValueOf(x).Uint())
	default:
		return -1
	}
}

// FitsReplies refuses a space a batch of whose values (rows of them) would not fit in a message of
// maxBytes: buffers are sized from the spaces, so a server must not make the client allocate more
// than its replies could ever fill.
func FitsReplies(s envs.Space, rows, maxBytes int) error {
	size := s.FlatSize()
	if size < 0 || size > maxBytes/(rows*ItemSize(s.DType())) {
		return fmt.Errorf("%v: %d copies of %d elements would not fit in a message of at most %d bytes", s, rows, size, maxBytes)
	}
	return nil
}
