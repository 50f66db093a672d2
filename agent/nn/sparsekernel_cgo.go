//go:build cgo && amd64

package nn

/*
#cgo CFLAGS: -O3 -I${SRCDIR}/../internal/f32
#include <stdint.h>

// No fused multiply-adds: the Go loops this kernel matches round the product and the sum apart.
#pragma GCC optimize("fp-contract=off")
#include "f32.h"

// sparse_backward_t is BackwardSparse for input units [k0, k1) on the transposed weights: for
// each row r, for each of its entries (j, v) in order, gt[j][k] += x[r][k] * v, and dx[r][k] is
// set to (or, with accumulate, has added) the sum over the row's entries, in order, of v *
// wt[j][k]. wt and gt are Out x In; dx (and then wt) may be NULL. k1 - k0 <= 256.
CLONES void sparse_backward_t(const int64_t *off, const int32_t *idx, const float *val, int rows,
		const float *restrict x, int in, int k0, int k1, const float *restrict wt, float *restrict gt,
		float *restrict dx, int accumulate) {
	const int n = k1 - k0;
	float s[256];
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (long)r * in + k0;
		for (int k = 0; k < n; k++) s[k] = 0;
		for (int64_t e = off[r]; e < off[r + 1]; e++) {
			const float v = val[e];
			float *g = gt + (long)idx[e] * in + k0;
			for (int k = 0; k < n; k++) g[k] += xr[k] * v;
			if (dx) {
				const float *w = wt + (long)idx[e] * in + k0;
				for (int k = 0; k < n; k++) s[k] += v * w[k];
			}
		}
		if (!dx) continue;
		float *d = dx + (long)r * in + k0;
		if (accumulate)
			for (int k = 0; k < n; k++) d[k] += s[k];
		else
			for (int k = 0; k < n; k++) d[k] = s[k];
	}
}

// transpose_f32 writes the transpose of src (rows x cols) into dst (cols x rows), by 8 x 8 tiles
// held in registers.
CLONES void transpose_f32(float *restrict dst, const float *restrict src, int rows, int cols) {
	int r0 = 0;
	for (; r0 + 8 <= rows; r0 += 8) {
		int c0 = 0;
		for (; c0 + 8 <= cols; c0 += 8) {
			float t[8][8];
			for (int i = 0; i < 8; i++)
				for (int j = 0; j < 8; j++) t[j][i] = src[(long)(r0 + i) * cols + c0 + j];
			for (int j = 0; j < 8; j++)
				for (int i = 0; i < 8; i++) dst[(long)(c0 + j) * rows + r0 + i] = t[j][i];
		}
		for (; c0 < cols; c0++)
			for (int i = 0; i < 8; i++) dst[(long)c0 * rows + r0 + i] = src[(long)(r0 + i) * cols + c0];
	}
	for (; r0 < rows; r0++)
		for (int c = 0; c < cols; c++) dst[(long)c * rows + r0] = src[(long)r0 * cols + c];
}
*/
import "C"

import "unsafe"

// kSparseBackwardT runs sparse_backward_t on the rows of dy for the input units [k0, k1) (at
// most 256 of them); dxd may be nil.
func kSparseBackwardT(dy *SparseRows, x []float32, in, k0, k1 int, wt, gt, dxd []float32, accumulate bool) {
	if dy.Rows == 0 || k1 <= k0 {
		return
	}
	var dxp, wtp *C.float // NULL without dx: the weights are not read then
	if dxd != nil {
		dxp, wtp = (*C.float)(unsafe.Pointer(&dxd[0])), (*C.float)(unsafe.Pointer(&wt[0]))
	}
	acc := C.int(0)
	if accumulate {
		acc = 1
	}
	var idx *C.int32_t
	var val *C.float
	if len(dy.Index) > 0 {
		idx, val = (*C.int32_t)(unsafe.Pointer(&dy.Index[0])), (*C.float)(unsafe.Pointer(&dy.Values[0]))
	}
	C.sparse_backward_t((*C.int64_t)(unsafe.Pointer(&dy.Offsets[0])), idx, val, C.int(dy.Rows),
		(*C.float)(unsafe.Pointer(&x[0])), C.int(in), C.int(k0), C.int(k1),
		wtp, (*C.float)(unsafe.Pointer(&gt[0])), dxp, acc)
}

// transpose writes the transpose of src (rows x cols) into dst (cols x rows).
func transpose(dst, src []float32, rows, cols int) {
	if rows == 0 || cols == 0 {
		return
	}
	C.transpose_f32((*C.float)(unsafe.Pointer(&dst[0])), (*C.float)(unsafe.Pointer(&src[0])), C.int(rows), C.int(cols))
}
