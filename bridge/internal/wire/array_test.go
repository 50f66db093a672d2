package wire

import (
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/envs"
)

// TestDecodeArrayRejectsBadShapes feeds peer-sent arrays whose shapes do not match their bytes;
// every one must be an error, never a panic or an array whose shape disagrees with its length.
func TestDecodeArrayRejectsBadShapes(t *testing.T) {
	const big = 1 << 21 // each dimension <= len(data), but the product 2^84 wraps int64
	data := make([]byte, big)
	cases := []struct {
		name    string
		w       Array
		wantSub string
	}{
		{"wrapping product", Array{DType: "uint8", Shape: []int{big, big, big, big}, Data: data}, "does not fit"},
		{"negative dim", Array{DType: "uint8", Shape: []int{-1}, Data: data}, "bad shape"},
		{"too few bytes", Array{DType: "float64", Shape: []int{3}, Data: make([]byte, 16)}, "16 bytes"},
		{"unknown dtype", Array{DType: "complex128", Shape: []int{1}, Data: make([]byte, 16)}, "complex128"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := DecodeArray(&tc.w, "test array")
			if err == nil || !strings.Contains(err.Error(), tc.wantSub) || !strings.Contains(err.Error(), "test array") {
				t.Fatalf("got %v (array of %d values), want an error naming the array and %q", err, a.Len(), tc.wantSub)
			}
		})
	}
}

// TestCheckArrayProductCannotWrap: shape [2^32, 2^32] has 2^64 elements, which an unchecked int
// product wraps to 0, matching an empty payload; the array would then be allocated at full size.
func TestCheckArrayProductCannotWrap(t *testing.T) {
	shape := []int{1 << 32, 1 << 32}
	w := Array{DType: "uint8", Shape: shape}
	if err := CheckArray(&w, "obs", envs.Uint8, shape); err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Fatalf("got %v, want a shape that does not fit its 0 bytes", err)
	}
}
