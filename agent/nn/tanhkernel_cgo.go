//go:build cgo && amd64

package nn

/*
#cgo CFLAGS: -O3 -I${SRCDIR}/../internal/f32
#include <stdint.h>
#include <string.h>

#pragma GCC optimize("no-trapping-math")
#include "f32.h"

// tanh32 of fastmath.go, written branch-free so the loop vectorises: the series below |x| =
// 0.125, else 2/(1+e^-2x) - 1 with f32_exp.
CLONES void tanh_slice(float *restrict dst, const float *restrict src, int n) {
	for (int i = 0; i < n; i++) {
		float x = src[i];
		float x2 = x * x;
		float series = x * (1.0f + x2 * (-1.0f / 3 + x2 * (2.0f / 15 + x2 * (-17.0f / 315))));
		float full = 2.0f / (1.0f + f32_exp(-2.0f * x)) - 1.0f;
		dst[i] = (x > -0.125f && x < 0.125f) ? series : full;
	}
}
*/
import "C"

import "unsafe"

// TanhInto writes tanh(src) into dst (same length), vectorised: the tanh of this package's
// networks, equal to Tanh32 up to float32 rounding.
func TanhInto(dst, src []float32) {
	if len(src) == 0 {
		return
	}
	dst = dst[:len(src)]
	C.tanh_slice((*C.float)(unsafe.Pointer(&dst[0])), (*C.float)(unsafe.Pointer(&src[0])), C.int(len(src)))
}
