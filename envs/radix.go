package envs

import (
	"fmt"
	"math"
)

// MixedRadix numbers the members of a product of finite sets: component i has Sizes[i] values and
// the first component is the least significant digit, so index = d0 + s0*(d1 + s1*(d2 + ...)).
// It is how a Tuple of Discretes becomes one Discrete (and back).
type MixedRadix struct {
	sizes []int64
	size  int64
}

// NewMixedRadix checks that every size is >= 1 and that the product fits an int64.
func NewMixedRadix(sizes ...int64) (MixedRadix, error) {
	if len(sizes) == 0 {
		return MixedRadix{}, fmt.Errorf("mixed radix: no components")
	}
	total := int64(1)
	for i, s := range sizes {
		if s < 1 {
			return MixedRadix{}, fmt.Errorf("mixed radix: component %d has size %d, want >= 1", i, s)
		}
		if total > math.MaxInt64/s {
			return MixedRadix{}, fmt.Errorf("mixed radix: product of sizes %v overflows int64", sizes)
		}
		total *= s
	}
	return MixedRadix{sizes: append([]int64(nil), sizes...), size: total}, nil
}

// Size is the number of indices, the product of the component sizes.
func (r MixedRadix) Size() int64 { return r.size }

// Sizes returns a copy of the component sizes.
func (r MixedRadix) Sizes() []int64 { return append([]int64(nil), r.sizes...) }

// Len is the number of components.
func (r MixedRadix) Len() int { return len(r.sizes) }

// Combine turns one digit per component into an index.
func (r MixedRadix) Combine(digits []int64) (int64, error) {
	if len(digits) != len(r.sizes) {
		return 0, fmt.Errorf("mixed radix: %d digits, want %d", len(digits), len(r.sizes))
	}
	index := int64(0)
	for i := len(r.sizes) - 1; i >= 0; i-- {
		d := digits[i]
		if d < 0 || d >= r.sizes[i] {
			return 0, fmt.Errorf("mixed radix: digit %d = %d out of range [0, %d)", i, d, r.sizes[i])
		}
		index = index*r.sizes[i] + d
	}
	return index, nil
}

// Split writes the digits of index into dst (len = Len()).
func (r MixedRadix) Split(index int64, dst []int64) error {
	if len(dst) != len(r.sizes) {
		return fmt.Errorf("mixed radix: destination has %d digits, want %d", len(dst), len(r.sizes))
	}
	if index < 0 || index >= r.size {
		return fmt.Errorf("mixed radix: index %d out of range [0, %d)", index, r.size)
	}
	for i, s := range r.sizes {
		dst[i] = index % s
		index /= s
	}
	return nil
}

// ActionFactors is implemented by environments whose Discrete action space is a mixed-radix
// combination of components (first component least significant), such as the algorithmic tasks'
// (move, write, char). A learner that embeds each component of the previous action separately uses it.
type ActionFactors interface {
	// ActionComponents returns the size of each component of the combined action.
	ActionComponents() []int64
}
