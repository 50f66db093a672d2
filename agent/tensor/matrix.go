package tensor

import (
	"fmt"
	"math"
	"strings"
)

// Matrix is a dense row-major float32 matrix: element (i, j) is Data[i*Cols+j].
type Matrix struct {
	Rows, Cols int
	Data       []float32
}

// New returns a zeroed rows x cols matrix. Negative sizes panic, as make does.
func New(rows, cols int) *Matrix {
	return &Matrix{Rows: rows, Cols: cols, Data: make([]float32, rows*cols)}
}

// FromSlice wraps data (not copied) as a rows x cols matrix.
func FromSlice(rows, cols int, data []float32) (*Matrix, error) {
	if rows < 0 || cols < 0 {
		return nil, fmt.Errorf("tensor: negative shape %dx%d", rows, cols)
	}
	if len(data) != rows*cols {
		return nil, fmt.Errorf("tensor: %d values do not fill a %dx%d matrix", len(data), rows, cols)
	}
	return &Matrix{Rows: rows, Cols: cols, Data: data}, nil
}

// Shape formats the shape as "RxC" for error messages.
func (m *Matrix) Shape() string {
	if m == nil {
		return "nil"
	}
	return fmt.Sprintf("%dx%d", m.Rows, m.Cols)
}

// At returns element (i, j).
func (m *Matrix) At(i, j int) float32 { return m.Data[i*m.Cols+j] }

// Set sets element (i, j).
func (m *Matrix) Set(i, j int, v float32) { m.Data[i*m.Cols+j] = v }

// Row returns row i, sharing memory.
func (m *Matrix) Row(i int) []float32 { return m.Data[i*m.Cols : (i+1)*m.Cols] }

// RowSlice returns rows [from, to) as a matrix sharing memory with m.
func (m *Matrix) RowSlice(from, to int) *Matrix {
	return &Matrix{Rows: to - from, Cols: m.Cols, Data: m.Data[from*m.Cols : to*m.Cols]}
}

// Zero sets every element to 0.
func (m *Matrix) Zero() { clear(m.Data) }

// Clone returns a deep copy.
func (m *Matrix) Clone() *Matrix {
	return &Matrix{Rows: m.Rows, Cols: m.Cols, Data: append([]float32(nil), m.Data...)}
}

// CopyFrom copies src into m; the shapes must match.
func (m *Matrix) CopyFrom(src *Matrix) error {
	if err := SameShape("copy", m, src); err != nil {
		return err
	}
	copy(m.Data, src.Data)
	return nil
}

// Reshape sets the logical shape to rows x cols, growing the backing array
// only when needed, so buffers can be reused without allocation. Contents are
// unspecified afterwards.
func (m *Matrix) Reshape(rows, cols int) {
	n := rows * cols
	if cap(m.Data) < n {
		m.Data = make([]float32, n)
	}
	m.Data = m.Data[:n]
	m.Rows, m.Cols = rows, cols
}

// SameShape returns an error naming both shapes when a and b differ.
func SameShape(op string, a, b *Matrix) error {
	if a == nil || b == nil {
		return fmt.Errorf("tensor: %s: nil matrix (%s vs %s)", op, a.Shape(), b.Shape())
	}
	if a.Rows != b.Rows || a.Cols != b.Cols {
		return fmt.Errorf("tensor: %s: shape %s does not match %s", op, a.Shape(), b.Shape())
	}
	return nil
}

// CheckShape returns an error naming what (its parts joined by spaces) when m is not rows x cols.
// The parts are joined only then, so a check that passes allocates nothing.
func CheckShape(m *Matrix, rows, cols int, what ...string) error {
	if m == nil {
		return fmt.Errorf("%s: nil matrix, want %dx%d", strings.Join(what, " "), rows, cols)
	}
	if m.Rows != rows || m.Cols != cols {
		return fmt.Errorf("%s: shape %s, want %dx%d", strings.Join(what, " "), m.Shape(), rows, cols)
	}
	return nil
}

// FirstNonFinite returns the index of the first NaN or Inf element, or -1.
func (m *Matrix) FirstNonFinite() int { return firstNonFinite(m.Data) }

// firstNonFiniteGo is firstNonFinite in Go (the kernel's reference and its stand-in without cgo).
func firstNonFiniteGo(x []float32) int {
	for i, v := range x {
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return i
		}
	}
	return -1
}

// SumSquares returns the sum of squared elements, accumulated in float64.
func (m *Matrix) SumSquares() float64 {
	var s float64
	for _, v := range m.Data {
		s += float64(v) * float64(v)
	}
	return s
}
