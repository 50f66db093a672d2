//go:build cgo && amd64

package tensor

/*
#cgo CFLAGS: -O3 -I${SRCDIR}
#include "tile.h"

// WIDE_CB is the block of b's columns that a block of rows runs over: 64 x 1024 floats, 256 KB,
// half an L2.
#define WIDE_CB 1024

// A row's range state (st, RANGE_ST floats a row): the running maximum, minimum and v - v sum of
// its entries so far, 8 lanes each. The v - v sum stays 0 over numbers and turns NaN at the first
// NaN or infinity, which the maximum and minimum may not show (max_ps drops a NaN operand).
#define RANGE_ST 24

// range8 folds the 8 entries v into the state s.
static inline __attribute__((always_inline, target("avx2,fma"))) void range8(float *s, __m256 v) {
	_mm256_storeu_ps(s, _mm256_max_ps(_mm256_loadu_ps(s), v));
	_mm256_storeu_ps(s + 8, _mm256_min_ps(_mm256_loadu_ps(s + 8), v));
	_mm256_storeu_ps(s + 16, _mm256_add_ps(_mm256_loadu_ps(s + 16), _mm256_sub_ps(v, v)));
}

// wide_cols computes the columns [lo, hi) of M rows: 16 at a time from the packed panels of b
// (panel q holds b[:, 16q:16q+16], k rows of 16 contiguous floats), then 8, then one by one. With
// st (not NULL: the M rows' range states) it folds each tile's entries into them while they are
// still in L1.
static inline __attribute__((always_inline, target("avx2,fma"))) void wide_cols(int M, int k, const float *a, int lda,
		const float *b, const float *bp, int ldb, float *c, int ldc, int lo, int hi, float *st) {
	int j = lo;
	for (; j + 16 <= hi; j += 16) {
		tile16(M, k, a, lda, bp + (long)(j / 16) * 16 * k, 16, c + j, ldc, 0, 0);
		if (st)
			for (int r = 0; r < M; r++) {
				__m256 v0 = _mm256_loadu_ps(c + (long)r * ldc + j), v1 = _mm256_loadu_ps(c + (long)r * ldc + j + 8);
				float *s = st + r * RANGE_ST;
				_mm256_storeu_ps(s, _mm256_max_ps(_mm256_loadu_ps(s), _mm256_max_ps(v0, v1)));
				_mm256_storeu_ps(s + 8, _mm256_min_ps(_mm256_loadu_ps(s + 8), _mm256_min_ps(v0, v1)));
				_mm256_storeu_ps(s + 16, _mm256_add_ps(_mm256_loadu_ps(s + 16), _mm256_add_ps(_mm256_sub_ps(v0, v0), _mm256_sub_ps(v1, v1))));
			}
	}
	for (; j + 8 <= hi; j += 8) {
		tile8(M, k, a, lda, b, ldb, c, ldc, j);
		if (st)
			for (int r = 0; r < M; r++) range8(st + r * RANGE_ST, _mm256_loadu_ps(c + (long)r * ldc + j));
	}
	for (; j < hi; j++) {
		tile1(M, k, a, lda, b, ldb, c, ldc, j);
		if (st)
			for (int r = 0; r < M; r++) range8(st + r * RANGE_ST, _mm256_set1_ps(c[(long)r * ldc + j]));
	}
}

// wide_pack copies b's full 16-column panels into bp (see wide_cols): the tiles then read b
// sequentially instead of one cache line from each of k rows far apart.
static void wide_pack(int n, int k, const float *b, float *bp) {
	for (int q = 0; q < n / 16; q++)
		for (int p = 0; p < k; p++)
			for (int c = 0; c < 16; c++) bp[((long)q * k + p) * 16 + c] = b[(long)p * n + q * 16 + c];
}

#define WIDE_CASE(M) case M: wide_cols(M, k, ar, k, b, bp, n, cr, n, j0, j1, s); break;

// wide_rows computes the rows [lo, hi) of c = a·b (row-major, dense: a is m x k, b k x n; bp b's
// panels from wide_pack), each block of WIDE_CB columns over every block of 6 rows. With st (not
// NULL: the rows' range states, (hi - lo) * RANGE_ST floats) it folds each tile into them; NULL
// compiles the folding away where it is inlined.
static inline __attribute__((always_inline, target("avx2,fma"))) void wide_rows(int lo, int hi, int n, int k,
		const float *a, const float *b, const float *bp, float *c, float *st) {
	for (int j0 = 0; j0 < n; j0 += WIDE_CB) {
		int j1 = j0 + WIDE_CB < n ? j0 + WIDE_CB : n;
		for (int i = lo; i < hi; i += 6) {
			const float *ar = a + (long)i * k;
			float *cr = c + (long)i * n;
			float *s = st ? st + (long)(i - lo) * RANGE_ST : NULL;
			switch (hi - i < 6 ? hi - i : 6) {
			WIDE_CASE(1) WIDE_CASE(2) WIDE_CASE(3) WIDE_CASE(4) WIDE_CASE(5) WIDE_CASE(6)
			}
		}
	}
}

// wide_sgemm computes the rows [lo, hi) of c = a·b.
static __attribute__((target("avx2,fma"))) void wide_sgemm(int lo, int hi, int n, int k, const float *a,
		const float *b, const float *bp, float *c) {
	wide_rows(lo, hi, n, k, a, b, bp, c, NULL);
}

// wide_sgemm_range is wide_sgemm that also writes each row's largest and smallest entries into
// mx[i] and mn[i], and in bad[i] 0 when every entry is a number (NaN otherwise), with st scratch
// for (hi - lo) * RANGE_ST floats. The entries are c's stored bits, whatever the order they are
// folded in: the maximum and minimum of numbers do not depend on it, up to the sign of a zero.
static __attribute__((target("avx2,fma"))) void wide_sgemm_range(int lo, int hi, int n, int k, const float *a,
		const float *b, const float *bp, float *c, float *st, float *mx, float *mn, float *bad) {
	for (int i = 0; i < hi - lo; i++) {
		_mm256_storeu_ps(st + (long)i * RANGE_ST, _mm256_set1_ps(-INFINITY));
		_mm256_storeu_ps(st + (long)i * RANGE_ST + 8, _mm256_set1_ps(INFINITY));
		_mm256_storeu_ps(st + (long)i * RANGE_ST + 16, _mm256_setzero_ps());
	}
	wide_rows(lo, hi, n, k, a, b, bp, c, st);
	for (int i = lo; i < hi; i++) {
		const float *s = st + (long)(i - lo) * RANGE_ST;
		float hi_ = s[0], lo_ = s[8], b = 0;
		for (int l = 0; l < 8; l++) {
			hi_ = s[l] > hi_ ? s[l] : hi_;
			lo_ = s[8 + l] < lo_ ? s[8 + l] : lo_;
			b += s[16 + l];
		}
		mx[i] = hi_;
		mn[i] = lo_;
		bad[i] = b;
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

// wideSgemmRange is wideSgemm that also writes the range of each row i in [lo, hi): its largest
// and smallest entries in mx[i] and mn[i], and in bad[i] 0 when every entry is a number (NaN
// otherwise), using st (at least (hi - lo) * wideRangeState floats) as scratch.
func wideSgemmRange(lo, hi, n, k int, a, b, bp, c, st, mx, mn, bad []float32) {
	C.wide_sgemm_range(C.int(lo), C.int(hi), C.int(n), C.int(k), (*C.float)(unsafe.Pointer(&a[0])),
		(*C.float)(unsafe.Pointer(&b[0])), (*C.float)(unsafe.Pointer(&bp[0])), (*C.float)(unsafe.Pointer(&c[0])),
		(*C.float)(unsafe.Pointer(&st[0])), (*C.float)(unsafe.Pointer(&mx[0])), (*C.float)(unsafe.Pointer(&mn[0])),
		(*C.float)(unsafe.Pointer(&bad[0])))
}

// wideRangeState is the scratch of wideSgemmRange per row.
const wideRangeState = C.RANGE_ST

// wideSgemm writes the rows [lo, hi) of c = a·b for row-major a (m x k) and b (k x n), dense
// strides, with bp b's panels from widePack: see wideProduct.
func wideSgemm(lo, hi, n, k int, a, b, bp, c []float32) {
	C.wide_sgemm(C.int(lo), C.int(hi), C.int(n), C.int(k), (*C.float)(unsafe.Pointer(&a[0])),
		(*C.float)(unsafe.Pointer(&b[0])), (*C.float)(unsafe.Pointer(&bp[0])), (*C.float)(unsafe.Pointer(&c[0])))
}
