package envs

import (
	"fmt"
	"math"
)

// BatchShape is the shape of an Array holding n values of s: [n] for a Discrete, [n, shape...] for a
// Box, [n, FlatSize] otherwise.
func BatchShape(s Space, n int) []int {
	switch x := s.(type) {
	case Discrete:
		return []int{n}
	case Box:
		return append([]int{n}, x.Shape...)
	default:
		return []int{n, s.FlatSize()}
	}
}

// NewBatch allocates a zeroed Array for n values of s.
func NewBatch(s Space, n int) Array { return NewArray(s.DType(), BatchShape(s, n)...) }

// checkRow verifies that a can hold a value of s in the given row.
func checkRow(s Space, a Array, row int) error {
	if err := a.Validate(); err != nil {
		return err
	}
	if a.DType.IsFloat() != s.DType().IsFloat() {
		return fmt.Errorf("envs: %s array cannot hold values of %v (dtype %s)", a.DType, s, s.DType())
	}
	if row < 0 || row >= a.Rows() {
		return fmt.Errorf("envs: row %d out of range [0, %d)", row, a.Rows())
	}
	if a.RowSize() != s.FlatSize() {
		return fmt.Errorf("envs: array rows have %d elements, %v needs %d", a.RowSize(), s, s.FlatSize())
	}
	return nil
}

// WriteRow writes the canonical value v of s into row `row` of a, flattened in canonical order
// (Tuple components in order, Dict entries by sorted key). v must be a member of s.
func WriteRow(s Space, a Array, row int, v any) error {
	if err := checkRow(s, a, row); err != nil {
		return err
	}
	if err := s.Check(v); err != nil {
		return fmt.Errorf("envs: write row %d: %w", row, err)
	}
	c := cursor{a: a, off: row * a.RowSize()}
	return c.write(s, v)
}

// ReadRow reads row `row` of a as a canonical value of s. It does not check membership: call s.Check
// on the result when the Array comes from outside.
func ReadRow(s Space, a Array, row int) (any, error) {
	if err := checkRow(s, a, row); err != nil {
		return nil, err
	}
	c := cursor{a: a, off: row * a.RowSize()}
	return c.read(s)
}

// cursor walks the elements of one row, whichever storage the Array uses.
type cursor struct {
	a   Array
	off int
}

func (c *cursor) putInt(x int64) {
	if c.a.DType.IsFloat() {
		c.a.Floats[c.off] = float64(x)
	} else {
		c.a.Ints[c.off] = x
	}
	c.off++
}

func (c *cursor) putFloat(x float64) {
	if c.a.DType.IsFloat() {
		c.a.Floats[c.off] = x
	} else {
		c.a.Ints[c.off] = int64(x) // integral: Check guaranteed it for integer Boxes
	}
	c.off++
}

func (c *cursor) getInt() (int64, error) {
	defer func() { c.off++ }()
	if !c.a.DType.IsFloat() {
		return c.a.Ints[c.off], nil
	}
	f := c.a.Floats[c.off]
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("envs: element %d = %v is not an integer", c.off, f)
	}
	return int64(f), nil
}

func (c *cursor) getFloat() float64 {
	defer func() { c.off++ }()
	if c.a.DType.IsFloat() {
		return c.a.Floats[c.off]
	}
	return float64(c.a.Ints[c.off])
}

func (c *cursor) write(s Space, v any) error {
	switch x := s.(type) {
	case Discrete:
		c.putInt(v.(int64))
	case Box:
		for _, f := range v.([]float64) {
			c.putFloat(f)
		}
	case MultiDiscrete, MultiBinary:
		for _, i := range v.([]int64) {
			c.putInt(i)
		}
	case Tuple:
		for i, sub := range x.Spaces {
			if err := c.write(sub, v.([]any)[i]); err != nil {
				return err
			}
		}
	case Dict:
		m := v.(map[string]any)
		for _, k := range x.Keys() {
			if err := c.write(x.Spaces[k], m[k]); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("envs: cannot flatten values of space type %T", s)
	}
	return nil
}

func (c *cursor) read(s Space) (any, error) {
	switch x := s.(type) {
	case Discrete:
		return c.getInt()
	case Box:
		out := make([]float64, x.FlatSize())
		for i := range out {
			out[i] = c.getFloat()
		}
		return out, nil
	case MultiDiscrete, MultiBinary:
		out := make([]int64, s.FlatSize())
		for i := range out {
			v, err := c.getInt()
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case Tuple:
		out := make([]any, len(x.Spaces))
		for i, sub := range x.Spaces {
			v, err := c.read(sub)
			if err != nil {
				return nil, fmt.Errorf("tuple component %d: %w", i, err)
			}
			out[i] = v
		}
		return out, nil
	case Dict:
		out := make(map[string]any, len(x.Spaces))
		for _, k := range x.Keys() {
			v, err := c.read(x.Spaces[k])
			if err != nil {
				return nil, fmt.Errorf("dict entry %q: %w", k, err)
			}
			out[k] = v
		}
		return out, nil
	default:
		return nil, fmt.Errorf("envs: cannot unflatten values of space type %T", s)
	}
}
