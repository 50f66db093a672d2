//go:build cgo && amd64

package lstm

/*
#cgo CFLAGS: -O3 -I${SRCDIR}/../../internal/f32
#include <stdint.h>
#include <string.h>

// Lets GCC if-convert the clamps so the cell loop vectorises (not allowed
// as a #cgo flag); it changes no result, only assumes FP traps are off.
#pragma GCC optimize("no-trapping-math")
// No fused multiply-adds: the AVX-512 clone may use them (the AVX2 clone, built without FMA, cannot),
// and a fused a*b+c rounds once where the Go code this kernel matches rounds twice.
#pragma GCC optimize("fp-contract=off")
#include "f32.h"

// The gate functions of gates.go (sigmoid32, tanh32) on f32_exp, branch-free so GCC
// vectorises the loop below; tanh has no small-|x| series here (absolute error ~1e-7).
static inline float k_sigmoid(float x) { return 1.0f / (1.0f + f32_exp(-x)); }
static inline float k_tanh(float x) { return 2.0f / (1.0f + f32_exp(-2.0f * x)) - 1.0f; }

// cell_row runs H cells of one row; store_tc is a constant at each call
// so the branch folds away and the loop vectorises.
static inline __attribute__((always_inline)) void cell_row(float *restrict g, const float *cp, float *cr,
		float *restrict hr, float *restrict tr, int H, float fb, int store_tc) {
	float *gi = g, *gj = g + H, *gf = g + 2 * H, *go = g + 3 * H;
	for (int k = 0; k < H; k++) {
		float i = k_sigmoid(gi[k]), j = k_tanh(gj[k]), f = k_sigmoid(gf[k] + fb), o = k_sigmoid(go[k]);
		float ck = cp[k] * f + i * j;
		float t = k_tanh(ck);
		gi[k] = i; gj[k] = j; gf[k] = f; go[k] = o;
		cr[k] = ck;
		hr[k] = o * t;
		if (store_tc) tr[k] = t;
	}
}

// lstm_cells runs rows consecutive LSTM cells: g (rows x 4H) holds the
// pre-activations [i j f o] in and the activations out; cprev may alias c;
// tc may be NULL.
CLONES void lstm_cells(float *g, const float *cprev, float *c, float *h, float *tc,
                       int rows, int H, float fb) {
	for (int b = 0; b < rows; b++) {
		long o4 = (long)b * 4 * H, o1 = (long)b * H;
		if (tc) cell_row(g + o4, cprev + o1, c + o1, h + o1, tc + o1, H, fb, 1);
		else cell_row(g + o4, cprev + o1, c + o1, h + o1, 0, H, fb, 0);
	}
}

// add_input_row adds bias + sum_f proj[offs[f] + tokens[f]] to the W
// values of g (one row of pre-activations).
static inline __attribute__((always_inline)) void add_input_row(float *restrict g, const float *proj,
		const float *bias, const int32_t *tokens, const int32_t *offs, int F, int W) {
	for (int k = 0; k < W; k++) g[k] += bias[k];
	for (int f = 0; f < F; f++) {
		const float *src = proj + (long)(offs[f] + tokens[f]) * W;
		for (int k = 0; k < W; k++) g[k] += src[k];
	}
}

// lstm_cells_input is lstm_cells (with tc) on rows whose g holds only
// h_prev*Wh: each row first gets its input pre-activations gathered from
// the projected tables, while it is hot in L1.
CLONES void lstm_cells_input(float *g, const float *cprev, float *c, float *h, float *tc, int rows, int H, float fb,
                             const float *proj, const float *bias, const int32_t *tokens, const int32_t *offs, int F) {
	for (int b = 0; b < rows; b++) {
		long o4 = (long)b * 4 * H, o1 = (long)b * H;
		add_input_row(g + o4, proj, bias, tokens + (long)b * F, offs, F, 4 * H);
		cell_row(g + o4, cprev + o1, c + o1, h + o1, tc + o1, H, fb, 1);
	}
}

static inline __attribute__((always_inline)) void cell_backward_row(const float *ai, const float *cp,
		const float *tr, const float *dhe, const float *dce, const float *dhn, float *restrict dcn,
		float *restrict dg, int H, int has_dce) {
	const float *aj = ai + H, *af = aj + H, *ao = af + H;
	float *di = dg, *dj = dg + H, *df = dg + 2 * H, *dout = dg + 3 * H;
	for (int k = 0; k < H; k++) {
		float i = ai[k], j = aj[k], f = af[k], o = ao[k], t = tr[k];
		float dht = dhe[k] + dhn[k];
		float dct = dcn[k] + dht * o * (1 - t * t);
		if (has_dce) dct += dce[k];
		dout[k] = dht * t * o * (1 - o);
		di[k] = dct * j * i * (1 - i);
		dj[k] = dct * i * (1 - j * j);
		df[k] = dct * cp[k] * f * (1 - f);
		dcn[k] = dct * f;
	}
}

// lstm_cells_backward is cellBackward over rows consecutive active cells;
// dcext may be NULL.
CLONES void lstm_cells_backward(const float *a, const float *cprev, const float *tc, const float *dhext,
                                const float *dcext, const float *dhnext, float *dcnext, float *dg,
                                int rows, int H) {
	for (int b = 0; b < rows; b++) {
		long o4 = (long)b * 4 * H, o1 = (long)b * H;
		if (dcext) cell_backward_row(a + o4, cprev + o1, tc + o1, dhext + o1, dcext + o1, dhnext + o1, dcnext + o1, dg + o4, H, 1);
		else cell_backward_row(a + o4, cprev + o1, tc + o1, dhext + o1, 0, dhnext + o1, dcnext + o1, dg + o4, H, 0);
	}
}

// gather_rows sets out[r] = bias + sum_f proj[offs[f] + tokens[r*F+f]] for
// rows x W outputs; tokens were validated by the caller.
CLONES void gather_rows(float *restrict out, const float *proj, const float *bias, const int32_t *tokens,
                        const int32_t *offs, int rows, int F, int W) {
	for (int r = 0; r < rows; r++) {
		float *o = out + (long)r * W;
		memcpy(o, bias, sizeof(float) * W);
		for (int f = 0; f < F; f++) {
			const float *src = proj + (long)(offs[f] + tokens[(long)r * F + f]) * W;
			for (int k = 0; k < W; k++) o[k] += src[k];
		}
	}
}

// lstm_cells_backward_input is lstm_cells_backward followed, per row, by
// the adjoint of add_input_row: the row's dg is added to dproj rows
// offs[f] + tokens[b*F+f] and to the bias row (the last of V+1), while hot
// in L1. The F+1 rows written for one input row are distinct, and dproj
// never aliases dg.
CLONES void lstm_cells_backward_input(const float *a, const float *cprev, const float *tc, const float *dhext,
                                      const float *dcext, const float *dhnext, float *dcnext, float *dg,
                                      int rows, int H, const int32_t *tokens, const int32_t *offs, int F,
                                      float *restrict dproj, int vrows) {
	int W = 4 * H;
	float *bias = dproj + (long)(vrows - 1) * W;
	for (int b = 0; b < rows; b++) {
		long o4 = (long)b * W, o1 = (long)b * H;
		if (dcext) cell_backward_row(a + o4, cprev + o1, tc + o1, dhext + o1, dcext + o1, dhnext + o1, dcnext + o1, dg + o4, H, 1);
		else cell_backward_row(a + o4, cprev + o1, tc + o1, dhext + o1, 0, dhnext + o1, dcnext + o1, dg + o4, H, 0);
		const float *restrict src = dg + o4;
		for (int k = 0; k < W; k++) bias[k] += src[k];
		for (int f = 0; f < F; f++) {
			float *dst = dproj + (long)(offs[f] + tokens[(long)b * F + f]) * W;
			for (int k = 0; k < W; k++) dst[k] += src[k];
		}
	}
}
*/
import "C"

import "unsafe"

// haveCellKernel reports whether the vectorised C cell kernels are built in.
const haveCellKernel = true

func fptr(s []float32) *C.float {
	if s == nil {
		return nil
	}
	return (*C.float)(unsafe.Pointer(&s[0]))
}

// cellsKernel is cell over rows consecutive rows (slices start at the first row).
func cellsKernel(g, cPrev, c, h, tc []float32, rows, H int, forget float32) {
	C.lstm_cells(fptr(g[:rows*4*H]), fptr(cPrev[:rows*H]), fptr(c[:rows*H]), fptr(h[:rows*H]), fptr(tc), C.int(rows), C.int(H), C.float(forget))
}

// cellsInputKernel is cell over rows consecutive rows after adding the
// input pre-activations of in for tokens (rows x F); tc must not be nil.
func cellsInputKernel(g, cPrev, c, h, tc []float32, rows, H int, forget float32, in *inputRows, tokens []int32) {
	F := len(in.offs)
	C.lstm_cells_input(fptr(g[:rows*4*H]), fptr(cPrev[:rows*H]), fptr(c[:rows*H]), fptr(h[:rows*H]), fptr(tc[:rows*H]),
		C.int(rows), C.int(H), C.float(forget), fptr(in.proj), fptr(in.bias[:4*H]),
		(*C.int32_t)(unsafe.Pointer(&tokens[:rows*F][0])), (*C.int32_t)(unsafe.Pointer(&in.offs[0])), C.int(F))
}

// cellsBackwardKernel is cellBackward over rows consecutive rows.
func cellsBackwardKernel(a, cPrev, tc, dhExt, dcExt, dhNext, dcNext, dg []float32, rows, H int) {
	C.lstm_cells_backward(fptr(a[:rows*4*H]), fptr(cPrev[:rows*H]), fptr(tc[:rows*H]), fptr(dhExt[:rows*H]), fptr(dcExt),
		fptr(dhNext[:rows*H]), fptr(dcNext[:rows*H]), fptr(dg[:rows*4*H]), C.int(rows), C.int(H))
}

// gatherKernel is gatherRows on the C kernel.
func gatherKernel(out, proj, bias []float32, tokens, offs []int32, rows, F, W int) {
	C.gather_rows(fptr(out[:rows*W]), fptr(proj), fptr(bias[:W]), (*C.int32_t)(unsafe.Pointer(&tokens[0])),
		(*C.int32_t)(unsafe.Pointer(&offs[0])), C.int(rows), C.int(F), C.int(W))
}

// cellsBackwardInputKernel is cellBackward over rows consecutive rows,
// each followed by in.scatterRow into dProj with that row's tokens.
func cellsBackwardInputKernel(a, cPrev, tc, dhExt, dcExt, dhNext, dcNext, dg []float32, rows, H int,
	in *inputRows, tokens []int32, dProj []float32) {
	F := len(in.offs)
	C.lstm_cells_backward_input(fptr(a[:rows*4*H]), fptr(cPrev[:rows*H]), fptr(tc[:rows*H]), fptr(dhExt[:rows*H]), fptr(dcExt),
		fptr(dhNext[:rows*H]), fptr(dcNext[:rows*H]), fptr(dg[:rows*4*H]), C.int(rows), C.int(H),
		(*C.int32_t)(unsafe.Pointer(&tokens[:rows*F][0])), (*C.int32_t)(unsafe.Pointer(&in.offs[0])), C.int(F),
		fptr(dProj), C.int(len(dProj)/(4*H)))
}
