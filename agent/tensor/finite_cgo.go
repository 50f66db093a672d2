//go:build cgo && amd64

package tensor

/*
#cgo CFLAGS: -O3
#include <stdint.h>
#include <string.h>

// first_non_finite returns the index of the first NaN or infinity of x[0..n), or -1. Blocks of 64
// entries are tested at once by their exponent bits (all ones: NaN or infinite), an integer OR
// that vectorises; a block that holds one is then searched entry by entry.
static long first_non_finite(const float *x, long n) {
	long i = 0;
	for (; i + 64 <= n; i += 64) {
		uint32_t any = 0;
		for (int j = 0; j < 64; j++) {
			uint32_t b;
			memcpy(&b, x + i + j, 4);
			any |= (b & 0x7f800000u) == 0x7f800000u;
		}
		if (any) break;
	}
	for (; i < n; i++) {
		uint32_t b;
		memcpy(&b, x + i, 4);
		if ((b & 0x7f800000u) == 0x7f800000u) return i;
	}
	return -1;
}
*/
import "C"

import "unsafe"

// firstNonFinite is the index of the first NaN or infinity in x, or -1 (firstNonFiniteGo, by
// exponent bits in C).
func firstNonFinite(x []float32) int {
	if len(x) == 0 {
		return -1
	}
	return int(C.first_non_finite((*C.float)(unsafe.Pointer(&x[0])), C.long(len(x))))
}
