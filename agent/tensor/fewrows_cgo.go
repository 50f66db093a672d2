//go:build cgo && amd64

package tensor

/*
#cgo CFLAGS: -O3
#include <immintrin.h>
#include <math.h>

// few_rows_ok reports that the CPU has AVX2 and FMA, which few_rows_sgemm needs.
static int few_rows_ok(void) {
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

// fr_block computes c[r][j0:j0+8] = a[r]·b[:, j0:j0+8] for the M rows r (M a constant after
// inlining) with one 8-lane accumulator per row, k in order, each step a fused multiply-add from
// 0: the accumulation order of OpenBLAS's sgemm micro-kernels, so the results are the same bits.
// The stored value is acc + 0, as the micro-kernel adds its alpha*acc to a C that beta = 0 has
// zeroed (which turns -0 into +0).
static inline __attribute__((always_inline, target("avx2,fma"))) void fr_block(int M, int k, const float *a, int lda,
		const float *b, int ldb, float *c, int ldc, int j0) {
	__m256 acc[8];
	for (int r = 0; r < M; r++) acc[r] = _mm256_setzero_ps();
	for (int p = 0; p < k; p++) {
		__m256 w = _mm256_loadu_ps(b + (long)p * ldb + j0);
		for (int r = 0; r < M; r++) acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(a[(long)r * lda + p]), w, acc[r]);
	}
	for (int r = 0; r < M; r++) _mm256_storeu_ps(c + (long)r * ldc + j0, _mm256_add_ps(acc[r], _mm256_setzero_ps()));
}

#define FR_AHEAD 128

// fr_block16 is fr_block over 16 columns for M <= 4 rows: each k step reads a whole cache line
// of b.
static inline __attribute__((always_inline, target("avx2,fma"))) void fr_block16(int M, int k, const float *a, int lda,
		const float *b, int ldb, float *c, int ldc, int j0) {
	__m256 lo[4], hi[4];
	for (int r = 0; r < M; r++) lo[r] = hi[r] = _mm256_setzero_ps();
	for (int p = 0; p < k; p++) {
		const float *row = b + (long)p * ldb + j0;
		// Each k is its own stream through b, more streams than the hardware prefetcher
		// follows: fetch the line this row needs FR_AHEAD columns on (a prefetch never faults).
		_mm_prefetch((const char *)(row + FR_AHEAD), _MM_HINT_T0);
		__m256 w0 = _mm256_loadu_ps(row), w1 = _mm256_loadu_ps(row + 8);
		for (int r = 0; r < M; r++) {
			__m256 x = _mm256_set1_ps(a[(long)r * lda + p]);
			lo[r] = _mm256_fmadd_ps(x, w0, lo[r]);
			hi[r] = _mm256_fmadd_ps(x, w1, hi[r]);
		}
	}
	for (int r = 0; r < M; r++) {
		_mm256_storeu_ps(c + (long)r * ldc + j0, _mm256_add_ps(lo[r], _mm256_setzero_ps()));
		_mm256_storeu_ps(c + (long)r * ldc + j0 + 8, _mm256_add_ps(hi[r], _mm256_setzero_ps()));
	}
}

static inline __attribute__((always_inline, target("avx2,fma"))) void fr_wide(int M, int k, const float *a, int lda,
		const float *b, int ldb, float *c, int ldc, int j0) {
	switch (M) {
	case 1: fr_block16(1, k, a, lda, b, ldb, c, ldc, j0); return;
	case 2: fr_block16(2, k, a, lda, b, ldb, c, ldc, j0); return;
	case 3: fr_block16(3, k, a, lda, b, ldb, c, ldc, j0); return;
	default: fr_block16(4, k, a, lda, b, ldb, c, ldc, j0); return;
	}
}

static inline __attribute__((always_inline, target("avx2,fma"))) void fr_cols(int M, int k, const float *a, int lda,
		const float *b, int ldb, float *c, int ldc, int lo, int hi) {
	int j = lo;
	// 16 columns at a time, in groups of up to 4 rows (the block of b stays in L1 between
	// groups), then 8 columns with every row at once, then one by one.
	for (; j + 16 <= hi; j += 16)
		for (int r = 0; r < M; r += 4) fr_wide(M - r < 4 ? M - r : 4, k, a + (long)r * lda, lda, b, ldb, c + (long)r * ldc, ldc, j);
	for (; j + 8 <= hi; j += 8) fr_block(M, k, a, lda, b, ldb, c, ldc, j);
	for (; j < hi; j++) {
		for (int r = 0; r < M; r++) {
			float acc = 0;
			for (int p = 0; p < k; p++) acc = fmaf(a[(long)r * lda + p], b[(long)p * ldb + j], acc);
			c[(long)r * ldc + j] = acc + 0.0f;
		}
	}
}

#define FR_CASE(M) case M: fr_cols(M, k, a, lda, b, ldb, c, ldc, lo, hi); return;

// few_rows_sgemm computes the columns [lo, hi) of c = a·b (row-major, m x k times k x n, m <= 8).
static __attribute__((target("avx2,fma"))) void few_rows_sgemm(int m, int k, const float *a, int lda,
		const float *b, int ldb, float *c, int ldc, int lo, int hi) {
	switch (m) {
	FR_CASE(1) FR_CASE(2) FR_CASE(3) FR_CASE(4) FR_CASE(5) FR_CASE(6) FR_CASE(7) FR_CASE(8)
	}
}
*/
import "C"

import "unsafe"

// fewRowsSupported is whether this CPU runs the few-rows kernel (AVX2 and FMA); it is read once,
// when an OpenBLAS engine is made.
func fewRowsSupported() bool { return C.few_rows_ok() != 0 }

// fewRowsSgemm writes the columns [lo, hi) of c = a·b for row-major a (m x k, m <= fewRowsMax)
// and b (k x n): see fewRowsProduct.
func fewRowsSgemm(m, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, lo, hi int) {
	C.few_rows_sgemm(C.int(m), C.int(k), (*C.float)(unsafe.Pointer(&a[0])), C.int(lda),
		(*C.float)(unsafe.Pointer(&b[0])), C.int(ldb), (*C.float)(unsafe.Pointer(&c[0])), C.int(ldc), C.int(lo), C.int(hi))
}
