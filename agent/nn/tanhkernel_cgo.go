//go:build cgo && amd64

package nn

/*
#cgo CFLAGS: -O3 -I${SRCDIR}/../internal/f32
#include <stdint.h>
#include <string.h>

#pragma GCC optimize("no-trapping-math")
// No fused multiply-adds: the AVX-512 clone may use them (the AVX2 clone, built without FMA, cannot),
// and a fused a*b+c rounds once where the Go code this kernel matches rounds twice.
#pragma GCC optimize("fp-contract=off")
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

// tanh_backward is tanhBackwardGo: d[i] * (1 - a[i]*a[i]), each operation rounded as Go rounds it.
CLONES void tanh_backward(float *restrict d, const float *restrict a, int n) {
	for (int i = 0; i < n; i++) d[i] = d[i] * (1.0f - a[i] * a[i]);
}

// add_rows adds v (cols) to each of the rows of y; add_col_sums adds to dst (cols) the rows of m
// one after the other: each entry sums in row order, as the Go loops they replace did.
CLONES void add_rows(float *restrict y, const float *restrict v, int rows, int cols) {
	for (int r = 0; r < rows; r++) {
		float *row = y + (long)r * cols;
		for (int j = 0; j < cols; j++) row[j] += v[j];
	}
}

CLONES void add_col_sums(float *restrict dst, const float *restrict m, int rows, int cols) {
	for (int r = 0; r < rows; r++) {
		const float *row = m + (long)r * cols;
		for (int j = 0; j < cols; j++) dst[j] += row[j];
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

// TanhBackward multiplies the gradient d by tanh's derivative at its outputs a (a's length):
// d[k] *= 1 - a[k]², vectorised, bit for bit tanhBackwardGo.
func TanhBackward(d, a []float32) {
	if len(a) == 0 {
		return
	}
	d = d[:len(a)]
	C.tanh_backward((*C.float)(unsafe.Pointer(&d[0])), (*C.float)(unsafe.Pointer(&a[0])), C.int(len(a)))
}

// kAddRows adds v to each of the rows rows of y (rows x len(v)), vectorised.
func kAddRows(y, v []float32, rows int) {
	if rows == 0 || len(v) == 0 {
		return
	}
	C.add_rows((*C.float)(unsafe.Pointer(&y[0])), (*C.float)(unsafe.Pointer(&v[0])), C.int(rows), C.int(len(v)))
}

// kAddColSums adds the column sums of m (rows x len(dst)) to dst, each in row order, vectorised.
func kAddColSums(dst, m []float32, rows int) {
	if rows == 0 || len(dst) == 0 {
		return
	}
	C.add_col_sums((*C.float)(unsafe.Pointer(&dst[0])), (*C.float)(unsafe.Pointer(&m[0])), C.int(rows), C.int(len(dst)))
}
