//go:build cgo && amd64

package tensor

/*
#cgo CFLAGS: -O3 -I${SRCDIR}
#include "tile.h"

// few_rows_ok reports that the CPU has AVX2 and FMA, which few_rows_sgemm needs.
static int few_rows_ok(void) {
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

// FR_AHEAD is how far along b's rows the few-rows kernel prefetches (tile16).
#define FR_AHEAD 128

static inline __attribute__((always_inline, target("avx2,fma"))) void fr_cols(int M, int k, const float *a, int lda,
		const float *b, int ldb, float *c, int ldc, int lo, int hi) {
	int j = lo;
	// 16 columns at a time, in groups of up to 4 rows (the block of b stays in L1 between
	// groups), then 8 columns with every row at once, then one by one.
	for (; j + 16 <= hi; j += 16)
		for (int r = 0; r < M; r += 4) {
			const float *ar = a + (long)r * lda;
			float *cr = c + (long)r * ldc;
			switch (M - r < 4 ? M - r : 4) {
			case 1: tile16(1, k, ar, lda, b, ldb, cr, ldc, j, FR_AHEAD); break;
			case 2: tile16(2, k, ar, lda, b, ldb, cr, ldc, j, FR_AHEAD); break;
			case 3: tile16(3, k, ar, lda, b, ldb, cr, ldc, j, FR_AHEAD); break;
			default: tile16(4, k, ar, lda, b, ldb, cr, ldc, j, FR_AHEAD); break;
			}
		}
	for (; j + 8 <= hi; j += 8) tile8(M, k, a, lda, b, ldb, c, ldc, j);
	for (; j < hi; j++) tile1(M, k, a, lda, b, ldb, c, ldc, j);
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
