package envs

import (
	"fmt"
	"strings"
)

// DType is the element type of a space or an Array, named as numpy names it.
type DType uint8

// The element types that spaces and Arrays support. Integer and boolean dtypes are stored in
// Array.Ints, floating ones in Array.Floats; the dtype says what they were on the wire.
const (
	Int64 DType = iota + 1
	Int32
	Int8
	Uint8
	Bool
	Float32
	Float64
)

var dtypeNames = [...]string{Int64: "int64", Int32: "int32", Int8: "int8", Uint8: "uint8", Bool: "bool", Float32: "float32", Float64: "float64"}

func (d DType) String() string {
	if int(d) < len(dtypeNames) && dtypeNames[d] != "" {
		return dtypeNames[d]
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// IsFloat reports whether values of d live in Array.Floats.
func (d DType) IsFloat() bool { return d == Float32 || d == Float64 }

// Valid reports whether d is one of the supported dtypes.
func (d DType) Valid() bool { return d >= Int64 && d <= Float64 }

// ParseDType turns a numpy dtype name into a DType.
func ParseDType(name string) (DType, error) {
	for d, n := range dtypeNames {
		if n != "" && n == strings.ToLower(name) {
			return DType(d), nil
		}
	}
	return 0, fmt.Errorf("envs: unsupported dtype %q", name)
}

// Array is a dense row-major batch of values of one dtype. Shape includes the leading copy
// dimension. Exactly one of Ints and Floats is used, as DType.IsFloat says.
type Array struct {
	DType  DType
	Shape  []int
	Ints   []int64
	Floats []float64
}

// NewArray allocates a zeroed Array of the given dtype and shape.
func NewArray(dtype DType, shape ...int) Array {
	n := 1
	for _, s := range shape {
		n *= s
	}
	a := Array{DType: dtype, Shape: append([]int(nil), shape...)}
	if dtype.IsFloat() {
		a.Floats = make([]float64, n)
	} else {
		a.Ints = make([]int64, n)
	}
	return a
}

// Len is the number of elements.
func (a Array) Len() int {
	if a.DType.IsFloat() {
		return len(a.Floats)
	}
	return len(a.Ints)
}

// Rows is the size of the leading dimension (0 for a scalar array).
func (a Array) Rows() int {
	if len(a.Shape) == 0 {
		return 0
	}
	return a.Shape[0]
}

// RowSize is the number of elements per row.
func (a Array) RowSize() int {
	n := 1
	for _, s := range a.Shape[min(1, len(a.Shape)):] {
		n *= s
	}
	return n
}

// Validate checks that the storage matches the dtype and shape.
func (a Array) Validate() error {
	if !a.DType.Valid() {
		return fmt.Errorf("envs: array has invalid dtype %d", a.DType)
	}
	n := 1
	for i, s := range a.Shape {
		if s < 0 {
			return fmt.Errorf("envs: array shape %v has negative dimension %d", a.Shape, i)
		}
		n *= s
	}
	if a.DType.IsFloat() {
		if len(a.Floats) != n || a.Ints != nil {
			return fmt.Errorf("envs: %s array of shape %v needs %d floats, has %d (and %d ints)", a.DType, a.Shape, n, len(a.Floats), len(a.Ints))
		}
		return nil
	}
	if len(a.Ints) != n || a.Floats != nil {
		return fmt.Errorf("envs: %s array of shape %v needs %d ints, has %d (and %d floats)", a.DType, a.Shape, n, len(a.Ints), len(a.Floats))
	}
	return nil
}

// Clone returns a deep copy.
func (a Array) Clone() Array {
	c := Array{DType: a.DType, Shape: append([]int(nil), a.Shape...)}
	if a.Ints != nil {
		c.Ints = append([]int64(nil), a.Ints...)
	}
	if a.Floats != nil {
		c.Floats = append([]float64(nil), a.Floats...)
	}
	return c
}

// RowRange is rows [lo, hi) of a as an Array sharing a's storage: writes through it change a (e.g.
// the actions of one sub-batch for a pipelined step). Like slicing, it panics outside a's rows.
func (a Array) RowRange(lo, hi int) Array {
	if lo < 0 || hi < lo || hi > a.Rows() {
		panic(fmt.Sprintf("envs: rows [%d, %d) of an array of %d rows", lo, hi, a.Rows()))
	}
	rs := a.RowSize()
	v := Array{DType: a.DType, Shape: append([]int{hi - lo}, a.Shape[1:]...)}
	if a.DType.IsFloat() {
		v.Floats = a.Floats[lo*rs : hi*rs : hi*rs]
	} else {
		v.Ints = a.Ints[lo*rs : hi*rs : hi*rs]
	}
	return v
}
