//go:build cgo && amd64

package nn

/*
#cgo CFLAGS: -O3
#include <stdint.h>
#include <string.h>

#pragma GCC optimize("no-trapping-math")

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CLONES
#endif

// tanh32 of fastmath.go, written branch-free so the loop vectorises: the series below |x| =
// 0.125, else 2/(1+e^-2x) - 1 with the same exp (round-to-nearest reduction instead of floor).
static inline float t_exp(float x) {
	x = x > 88.0f ? 88.0f : x;
	x = x < -87.0f ? -87.0f : x;
	const float magic = 12582912.0f;
	float t = x * 1.44269504088896341f + magic;
	float n = t - magic;
	float r = x - n * 0.693359375f - n * -2.12194440e-4f;
	float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720))))));
	int32_t bits = ((int32_t)n + 127) << 23;
	float s;
	memcpy(&s, &bits, 4);
	return p * s;
}

CLONES void tanh_slice(float *restrict dst, const float *restrict src, int n) {
	for (int i = 0; i < n; i++) {
		float x = src[i];
		float x2 = x * x;
		float series = x * (1.0f + x2 * (-1.0f / 3 + x2 * (2.0f / 15 + x2 * (-17.0f / 315))));
		float full = 2.0f / (1.0f + t_exp(-2.0f * x)) - 1.0f;
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
