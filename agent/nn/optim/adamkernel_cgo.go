//go:build cgo && amd64

package optim

/*
#cgo CFLAGS: -O3
#cgo LDFLAGS: -lm
#include <math.h>
#include <immintrin.h>

// adam_avx is adamUpdateGo on 8 lanes: the same expressions, evaluated left to right as Go does
// (AVX has no fused multiply-add for the compiler to contract them into), and a square root that
// rounds once, as float32(math.Sqrt(float64(v))) does. Written with intrinsics: GCC keeps sqrtf a
// library call for errno, which stops the loop from vectorising, and cgo does not take
// -fno-math-errno.
__attribute__((target("avx"))) static void adam_avx(float *restrict w, float *restrict m, float *restrict v,
		const float *restrict g, long n, float b1, float b2, float c1, float c2, float lrT, float eps) {
	const __m256 B1 = _mm256_set1_ps(b1), B2 = _mm256_set1_ps(b2), C1 = _mm256_set1_ps(c1), C2 = _mm256_set1_ps(c2),
		L = _mm256_set1_ps(lrT), E = _mm256_set1_ps(eps);
	long k = 0;
	for (; k + 8 <= n; k += 8) {
		__m256 gk = _mm256_loadu_ps(g + k);
		__m256 mk = _mm256_add_ps(_mm256_mul_ps(B1, _mm256_loadu_ps(m + k)), _mm256_mul_ps(C1, gk));
		__m256 vk = _mm256_add_ps(_mm256_mul_ps(B2, _mm256_loadu_ps(v + k)), _mm256_mul_ps(_mm256_mul_ps(C2, gk), gk));
		_mm256_storeu_ps(m + k, mk);
		_mm256_storeu_ps(v + k, vk);
		__m256 step = _mm256_div_ps(_mm256_mul_ps(L, mk), _mm256_add_ps(_mm256_sqrt_ps(vk), E));
		_mm256_storeu_ps(w + k, _mm256_sub_ps(_mm256_loadu_ps(w + k), step));
	}
	for (; k < n; k++) {
		float gk = g[k];
		float mk = b1 * m[k] + c1 * gk;
		float vk = b2 * v[k] + c2 * gk * gk;
		m[k] = mk;
		v[k] = vk;
		w[k] -= lrT * mk / (sqrtf(vk) + eps);
	}
}

// adam_scalar is the same one entry at a time, for a CPU without AVX.
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
static void adam_scalar(float *restrict w, float *restrict m, float *restrict v, const float *restrict g, long n,
		float b1, float b2, float c1, float c2, float lrT, float eps) {
	for (long k = 0; k < n; k++) {
		float gk = g[k];
		float mk = b1 * m[k] + c1 * gk;
		float vk = b2 * v[k] + c2 * gk * gk;
		m[k] = mk;
		v[k] = vk;
		w[k] -= lrT * mk / (sqrtf(vk) + eps);
	}
}
#pragma GCC pop_options

static void adam_update(float *w, float *m, float *v, const float *g, long n, float b1, float b2, float c1, float c2,
		float lrT, float eps) {
	if (__builtin_cpu_supports("avx")) adam_avx(w, m, v, g, n, b1, b2, c1, c2, lrT, eps);
	else adam_scalar(w, m, v, g, n, b1, b2, c1, c2, lrT, eps);
}
*/
import "C"

import "unsafe"

// adamUpdate is adamUpdateGo in C, 8 lanes at a time where the CPU has AVX: the same bits.
func adamUpdate(w, m, v, g []float32, b1, b2, c1, c2, lrT, eps float32) {
	if len(w) == 0 {
		return
	}
	_, _, _ = m[len(w)-1], v[len(w)-1], g[len(w)-1]
	f := func(s []float32) *C.float { return (*C.float)(unsafe.Pointer(&s[0])) }
	C.adam_update(f(w), f(m), f(v), f(g), C.long(len(w)), C.float(b1), C.float(b2), C.float(c1), C.float(c2), C.float(lrT), C.float(eps))
}
