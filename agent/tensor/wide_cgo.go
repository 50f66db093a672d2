//go:build cgo && amd64

package tensor

/*
#cgo CFLAGS: -O3 -I${SRCDIR}
#include "tile.h"

// WIDE_CB is the block of b's columns that a block of rows runs over: 64 x 1024 floats, 256 KB,
// half an L2.
#define WIDE_CB 1024

// wide_cols computes the columns [lo, hi) of M rows: 16 at a time from the packed panels of b
// (panel q holds b[:, 16q:16q+16], k rows of 16 contiguous floats), then 8, then one by one.
static inline __attribute__((always_inline, target("avx2,fma"))) void wide_cols(int M, int k, const float *a, int lda,
		const float *b, const float *bp, int ldb, float *c, int ldc, int lo, int hi) {
	int j = lo;
	for (; j + 16 <= hi; j += 16) tile16(M, k, a, lda, bp + (long)(j / 16) * 16 * k, 16, c + j, ldc, 0, 0);
	for (; j + 8 <= hi; j += 8) tile8(M, k, a, lda, b, ldb, c, ldc, j);
	for (; j < hi; j++) tile1(M, k, a, lda, b, ldb, c, ldc, j);
}

// wide_pack copies b's full 16-column panels into bp (see wide_cols): the tiles then read b
// sequentially instead of one cache line from each of k rows far apart.
static void wide_pack(int n, int k, const float *b, float *bp) {
	for (int q = 0; q < n / 16; q++)
		for (int p = 0; p < k; p++)
			for (int c = 0; c < 16; c++) bp[((long)q * k + p) * 16 + c] = b[(long)p * n + q * 16 + c];
}

#define WIDE_CASE(M) case M: wide_cols(M, k, ar, k, b, bp, n, cr, n, j0, j1); break;

// wide_sgemm computes the rows [lo, hi) of c = a·b (row-major, dense: a is m x k, b k x n; bp
// b's panels from wide_pack).
static __attribute__((target("avx2,fma"))) void wide_sgemm(int lo, int hi, int n, int k, const float *a,
		const float *b, const float *bp, float *c) {
	for (int j0 = 0; j0 < n; j0 += WIDE_CB) {
		int j1 = j0 + WIDE_CB < n ? j0 + WIDE_CB : n;
		for (int i = lo; i < hi; i += 6) {
			const float *ar = a + (long)i * k;
			float *cr = c + (long)i * n;
			switch (hi - i < 6 ? hi - i : 6) {
			WIDE_CASE(1) WIDE_CASE(2) WIDE_CASE(3) WIDE_CASE(4) WIDE_CASE(5) WIDE_CASE(6)
			}
		}
	}
}
*/
import "C"

import "unsafe"

// widePack copies b's (k x n) full 16-column panels into bp, which holds at least
// widePanels(n, k) floats.
func widePack(n, k int, b, bp []float32) {
	if n < 16 {
		return
	}
	C.wide_pack(C.int(n), C.int(k), (*C.float)(unsafe.Pointer(&b[0])), (*C.float)(unsafe.Pointer(&bp[0])))
}

// wideSgemm writes the rows [lo, hi) of c = a·b for row-major a (m x k) and b (k x n), dense
// strides, with bp b's panels from widePack: see wideProduct.
func wideSgemm(lo, hi, n, k int, a, b, bp, c []float32) {
	C.wide_sgemm(C.int(lo), C.int(hi), C.int(n), C.int(k), (*C.float)(unsafe.Pointer(&a[0])),
		(*C.float)(unsafe.Pointer(&b[0])), (*C.float)(unsafe.Pointer(&bp[0])), (*C.float)(unsafe.Pointer(&c[0])))
}
