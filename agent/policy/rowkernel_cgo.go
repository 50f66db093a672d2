//go:build cgo && amd64

package policy

/*
#cgo CFLAGS: -O3 -I${SRCDIR}/../internal/f32 -Wno-psabi
#cgo LDFLAGS: -lm
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <immintrin.h>

// Lets GCC if-convert the selects below so the loops vectorise (not allowed as a #cgo flag); it
// changes no result, only assumes FP traps are off.
#pragma GCC optimize("no-trapping-math")
// No fused multiply-adds: the AVX-512 clone may use them (the AVX2 clone, built without FMA, cannot),
// and a fused a*b+c rounds once where the Go code this kernel matches rounds twice.
#pragma GCC optimize("fp-contract=off")
#include "f32.h"

// Explicit 8-wide vectors (GCC vector extensions): GCC does not vectorise float reductions
// without reassociation flags, and the flags that allow it would also fold the v - v test for
// NaN and infinities away. Under the "default" clone each is two SSE registers.
typedef float v8sf __attribute__((vector_size(32)));
typedef int32_t v8si __attribute__((vector_size(32)));

static inline __attribute__((always_inline)) v8sf load8(const float *p) { v8sf v; memcpy(&v, p, 32); return v; }
static inline __attribute__((always_inline)) v8sf splat8(float x) { return (v8sf){x, x, x, x, x, x, x, x}; }
static inline __attribute__((always_inline)) v8sf sel8(v8si mask, v8sf a, v8sf b) { return (v8sf)((mask & (v8si)a) | (~mask & (v8si)b)); }
static inline __attribute__((always_inline)) float hsum8(v8sf v) { return ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7])); }
// mask8 is the sign bits of the 8 lanes of a comparison, lane l at bit l: SSE's movmskps on each
// half, which every clone has.
typedef float v4sf __attribute__((vector_size(16)));
static inline __attribute__((always_inline)) unsigned mask8(v8si a) {
	v4sf lo, hi;
	memcpy(&lo, &a, 16);
	memcpy(&hi, (const char *)&a + 16, 16);
	return (unsigned)__builtin_ia32_movmskps(lo) | (unsigned)__builtin_ia32_movmskps(hi) << 4;
}

// k_exp8 is f32_exp on 8 lanes.
static inline __attribute__((always_inline)) v8sf k_exp8(v8sf x) {
	const v8sf hi = splat8(88.0f), lo = splat8(-87.0f), magic = splat8(12582912.0f);
	x = sel8(x > hi, hi, x);
	x = sel8(x < lo, lo, x);
	v8sf n = (x * splat8(1.44269504088896341f) + magic) - magic;
	v8sf r = x - n * splat8(0.693359375f) - n * splat8(-2.12194440e-4f);
	v8sf p = splat8(1.0f / 720);
	p = p * r + splat8(1.0f / 120);
	p = p * r + splat8(1.0f / 24);
	p = p * r + splat8(1.0f / 6);
	p = p * r + splat8(0.5f);
	p = p * r + splat8(1.0f);
	p = p * r + splat8(1.0f);
	v8si bits = (__builtin_convertvector(n, v8si) + 127) << 23;
	return p * (v8sf)bits;
}

#define BLOCK 256

// row_max returns max_i scale*h[i] in *out, sum_i scale*h[i] in *sum (float32 lanes over blocks
// of BLOCK entries, double across blocks) and 1, or 0 when an entry is NaN or infinite (then
// *out and *sum are unspecified). scale > 0.
CLONES int row_max(const float *h, int n, float scale, float *out, double *sum) {
	const v8sf sc = splat8(scale);
	v8sf m0 = splat8(-INFINITY), m1 = m0, b0 = splat8(0), b1 = b0;
	double total = 0;
	int i = 0;
	while (i + 16 <= n) {
		int e = i + BLOCK <= n ? i + BLOCK : n;
		v8sf s0 = splat8(0), s1 = s0;
		for (; i + 16 <= e; i += 16) {
			v8sf a = load8(h + i) * sc, b = load8(h + i + 8) * sc;
			m0 = sel8(a > m0, a, m0);
			m1 = sel8(b > m1, b, m1);
			b0 += a - a;
			b1 += b - b;
			s0 += a;
			s1 += b;
		}
		total += (double)hsum8(s0 + s1);
	}
	m0 = sel8(m1 > m0, m1, m0);
	b0 += b1;
	float m = m0[0], bad = hsum8(b0);
	for (int l = 1; l < 8; l++) m = m0[l] > m ? m0[l] : m;
	for (; i < n; i++) {
		float v = h[i] * scale;
		m = v > m ? v : m;
		bad += v - v;
		total += (double)v;
	}
	*out = m;
	*sum = total;
	return bad == 0;
}

// row_sumexp returns sum_i exp(scale*h[i] - m), summed in float32 lanes over blocks of BLOCK
// entries and in double across blocks.
CLONES double row_sumexp(const float *h, int n, float scale, float m) {
	const v8sf sc = splat8(scale), mm = splat8(m);
	double total = 0;
	int i = 0;
	while (i + 16 <= n) {
		int e = i + BLOCK <= n ? i + BLOCK : n;
		v8sf a0 = splat8(0), a1 = a0;
		for (; i + 16 <= e; i += 16) {
			a0 += k_exp8(load8(h + i) * sc - mm);
			a1 += k_exp8(load8(h + i + 8) * sc - mm);
		}
		total += (double)hsum8(a0 + a1);
	}
	float s = 0;
	for (; i < n; i++) s += f32_exp(h[i] * scale - m);
	return total + (double)s;
}

// row_exp_scaled writes d[i] = c * (exp(scale*h[i] - m) * inv). Below -80 the exponential is
// taken at x + 64 and scaled by e^-64, so that it becomes a float32 subnormal and then 0 as the
// float64 softmax's exponentials do (rounded to float32 before they are normalised), instead of
// stopping at f32_exp's clamp (e^-87).
CLONES void row_exp_scaled(float *restrict d, const float *restrict h, int n, float scale, float m, float inv, float c) {
	for (int i = 0; i < n; i++) {
		float x = h[i] * scale - m;
		int tiny = x < -80.0f;
		float e = f32_exp(tiny ? x + 64.0f : x);
		e = tiny ? e * 1.60381089054863785e-28f : e;
		d[i] = c * (e * inv);
	}
}

// row_sumexp_store is row_sumexp (the same sum, bit for bit) that also writes e[i] = exp(scale*h[i]
// - m) as row_exp_scaled takes it before scaling (below -80 through the subnormals): row_scale
// then turns e into row_exp_scaled's d without an exponential.
CLONES double row_sumexp_store(float *restrict e, const float *restrict h, int n, float scale, float m) {
	const v8sf sc = splat8(scale), mm = splat8(m), lim = splat8(-80.0f), up = splat8(64.0f), tiny = splat8(1.60381089054863785e-28f);
	double total = 0;
	int i = 0;
	while (i + 16 <= n) {
		int end = i + BLOCK <= n ? i + BLOCK : n;
		v8sf a0 = splat8(0), a1 = a0;
		for (; i + 16 <= end; i += 16) {
			v8sf x0 = load8(h + i) * sc - mm, x1 = load8(h + i + 8) * sc - mm;
			v8sf e0 = k_exp8(x0), e1 = k_exp8(x1);
			a0 += e0;
			a1 += e1;
			v8si t0 = x0 < lim, t1 = x1 < lim;
			if (mask8(t0 | t1)) { // rare: a probability below e^-80
				e0 = sel8(t0, k_exp8(x0 + up) * tiny, e0);
				e1 = sel8(t1, k_exp8(x1 + up) * tiny, e1);
			}
			memcpy(e + i, &e0, 32);
			memcpy(e + i + 8, &e1, 32);
		}
		total += (double)hsum8(a0 + a1);
	}
	float s = 0;
	for (; i < n; i++) {
		float x = h[i] * scale - m;
		s += f32_exp(x);
		e[i] = x < -80.0f ? f32_exp(x + 64.0f) * 1.60381089054863785e-28f : f32_exp(x);
	}
	return total + (double)s;
}

// The fused exponential: f32_exp's polynomial with each multiply-add one fused operation (one
// rounding where f32_exp has two), about 1.6 times faster on AVX2. Its bits are its own, so only
// the passes that already part from the reference path's take it (ExpFused). It has no upper
// clamp: its callers pass x = scale*h - m with m the row's largest scale*h, so x <= 0. There are
// two kernels with the same roundings and so the same bits: the AVX2 and FMA instructions', and
// fmaf's lane by lane for CPUs without FMA.

// f32_exp_fused is one lane of the fused exponential.
static inline float f32_exp_fused(float x) {
	x = x < -87.0f ? -87.0f : x;
	const float magic = 12582912.0f;
	float n = fmaf(x, 1.44269504088896341f, magic) - magic;
	float r = fmaf(n, 2.12194440e-4f, fmaf(n, -0.693359375f, x));
	float p = fmaf(fmaf(fmaf(fmaf(fmaf(fmaf(1.0f / 720, r, 1.0f / 120), r, 1.0f / 24), r, 1.0f / 6), r, 0.5f), r, 1.0f), r, 1.0f);
	int32_t bits = ((int32_t)n + 127) << 23;
	float s;
	memcpy(&s, &bits, 4);
	return p * s;
}

// hsum16 adds 16 lanes in hsum8's order after adding lane l + 8 to lane l, as the vector loops do.
static inline float hsum16(const float *a) {
	float s[8];
	for (int l = 0; l < 8; l++) s[l] = a[l] + a[l + 8];
	return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
}

// The AVX2 and FMA kernel, with intrinsics: the generic vectors above are lowered to halves in a
// function whose target differs from the helpers'.
#pragma GCC push_options
#pragma GCC target("avx2,fma")
static inline __m256 exp8_fused(__m256 x) {
	const __m256 lo = _mm256_set1_ps(-87.0f), magic = _mm256_set1_ps(12582912.0f);
	x = _mm256_blendv_ps(x, lo, _mm256_cmp_ps(x, lo, _CMP_LT_OQ));
	__m256 n = _mm256_sub_ps(_mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), magic), magic);
	__m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-0.693359375f), x);
	r = _mm256_fmadd_ps(n, _mm256_set1_ps(2.12194440e-4f), r);
	__m256 p = _mm256_fmadd_ps(_mm256_set1_ps(1.0f / 720), r, _mm256_set1_ps(1.0f / 120));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
	__m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(n), _mm256_set1_epi32(127)), 23);
	return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}

static double row_sumexp_store_fused_hw(float *restrict e, const float *restrict h, int n, float scale, float m) {
	const __m256 sc = _mm256_set1_ps(scale), mm = _mm256_set1_ps(m), lim = _mm256_set1_ps(-80.0f);
	const __m256 up = _mm256_set1_ps(64.0f), tiny = _mm256_set1_ps(1.60381089054863785e-28f);
	double total = 0;
	int i = 0;
	while (i + 16 <= n) {
		int end = i + BLOCK <= n ? i + BLOCK : n;
		__m256 a0 = _mm256_setzero_ps(), a1 = a0;
		for (; i + 16 <= end; i += 16) {
			__m256 x0 = _mm256_sub_ps(_mm256_mul_ps(_mm256_loadu_ps(h + i), sc), mm);
			__m256 x1 = _mm256_sub_ps(_mm256_mul_ps(_mm256_loadu_ps(h + i + 8), sc), mm);
			__m256 e0 = exp8_fused(x0), e1 = exp8_fused(x1);
			a0 = _mm256_add_ps(a0, e0);
			a1 = _mm256_add_ps(a1, e1);
			__m256 t0 = _mm256_cmp_ps(x0, lim, _CMP_LT_OQ), t1 = _mm256_cmp_ps(x1, lim, _CMP_LT_OQ);
			if (_mm256_movemask_ps(_mm256_or_ps(t0, t1))) { // rare: a probability below e^-80
				e0 = _mm256_blendv_ps(e0, _mm256_mul_ps(exp8_fused(_mm256_add_ps(x0, up)), tiny), t0);
				e1 = _mm256_blendv_ps(e1, _mm256_mul_ps(exp8_fused(_mm256_add_ps(x1, up)), tiny), t1);
			}
			_mm256_storeu_ps(e + i, e0);
			_mm256_storeu_ps(e + i + 8, e1);
		}
		float a[16];
		_mm256_storeu_ps(a, a0);
		_mm256_storeu_ps(a + 8, a1);
		total += (double)hsum16(a);
	}
	float s = 0;
	for (; i < n; i++) {
		float x = h[i] * scale - m;
		s += f32_exp_fused(x);
		e[i] = x < -80.0f ? f32_exp_fused(x + 64.0f) * 1.60381089054863785e-28f : f32_exp_fused(x);
	}
	return total + (double)s;
}
#pragma GCC pop_options

// row_sumexp_store_fused_lanes is the kernel above lane by lane, in its order.
static double row_sumexp_store_fused_lanes(float *restrict e, const float *restrict h, int n, float scale, float m) {
	double total = 0;
	int i = 0;
	while (i + 16 <= n) {
		int end = i + BLOCK <= n ? i + BLOCK : n;
		float a[16] = {0};
		for (; i + 16 <= end; i += 16) {
			for (int l = 0; l < 16; l++) {
				float x = h[i + l] * scale - m, v = f32_exp_fused(x);
				a[l] += v;
				e[i + l] = x < -80.0f ? f32_exp_fused(x + 64.0f) * 1.60381089054863785e-28f : v;
			}
		}
		total += (double)hsum16(a);
	}
	float s = 0;
	for (; i < n; i++) {
		float x = h[i] * scale - m;
		s += f32_exp_fused(x);
		e[i] = x < -80.0f ? f32_exp_fused(x + 64.0f) * 1.60381089054863785e-28f : f32_exp_fused(x);
	}
	return total + (double)s;
}

// row_sumexp_store_fused is row_sumexp_store with the fused exponential, on the FMA instructions
// where the CPU has them and lane by lane otherwise or when portable is 1 (the tests' check that
// both give the same bits). m must be the row's largest scale*h[i].
static double row_sumexp_store_fused(float *restrict e, const float *restrict h, int n, float scale, float m, int portable) {
	if (!portable && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return row_sumexp_store_fused_hw(e, h, n, scale, m);
	return row_sumexp_store_fused_lanes(e, h, n, scale, m);
}

// row_scale writes d[i] = c * (d[i] * inv): with d from row_sumexp_store, row_exp_scaled's d.
CLONES void row_scale(float *d, int n, float inv, float c) {
	for (int i = 0; i < n; i++) d[i] = c * (d[i] * inv);
}

// row_count_sum_above counts the entries with scale*h[i] > t and sums scale*h[i] - m over them
// (in float32 lanes over blocks of BLOCK entries, in double across blocks).
CLONES void row_count_sum_above(const float *h, int n, float scale, float t, float m, int *cnt, double *sum) {
	const v8sf sc = splat8(scale), tt = splat8(t), mm = splat8(m), zero = splat8(0);
	v8si c0 = {0, 0, 0, 0, 0, 0, 0, 0};
	double total = 0;
	int i = 0;
	while (i + 8 <= n) {
		int e = i + BLOCK <= n ? i + BLOCK : n;
		v8sf a0 = zero;
		for (; i + 8 <= e; i += 8) {
			v8sf v = load8(h + i) * sc;
			v8si in = v > tt;
			c0 -= in;
			a0 += sel8(in, v - mm, zero);
		}
		total += (double)hsum8(a0);
	}
	int cc = 0;
	for (int l = 0; l < 8; l++) cc += c0[l];
	for (; i < n; i++) {
		float v = h[i] * scale;
		if (v > t) { cc++; total += (double)(v - m); }
	}
	*cnt = cc;
	*sum = total;
}

// row_max_pos returns in *mx the largest of 0 and the p[i], and in *cnt how many p[i] > 0.
CLONES void row_max_pos(const float *p, int n, float *mx, int *cnt) {
	v8sf m0 = splat8(0), m1 = m0;
	v8si c0 = {0, 0, 0, 0, 0, 0, 0, 0}, c1 = c0;
	const v8sf zero = splat8(0);
	int i = 0;
	for (; i + 16 <= n; i += 16) {
		v8sf a = load8(p + i), b = load8(p + i + 8);
		m0 = sel8(a > m0, a, m0);
		m1 = sel8(b > m1, b, m1);
		c0 -= a > zero;
		c1 -= b > zero;
	}
	m0 = sel8(m1 > m0, m1, m0);
	c0 += c1;
	float m = m0[0];
	int c = 0;
	for (int l = 0; l < 8; l++) {
		m = m0[l] > m ? m0[l] : m;
		c += c0[l];
	}
	for (; i < n; i++) {
		m = p[i] > m ? p[i] : m;
		c += p[i] > 0;
	}
	*mx = m;
	*cnt = c;
}

// row_gather_above writes the ascending indices of the entries with scale*h[i] > t into idx and
// returns their number, or -1 as soon as more than limit are found (idx then holds a part).
CLONES int row_gather_above(const float *h, int n, float scale, float t, int32_t *idx, int limit) {
	const v8sf sc = splat8(scale), tt = splat8(t);
	int k = 0, i = 0;
	for (; i + 16 <= n; i += 16) {
		// One bit per entry above t; the loop below costs one step per candidate, not per entry.
		unsigned m = mask8(load8(h + i) * sc > tt) | mask8(load8(h + i + 8) * sc > tt) << 8;
		for (; m; m &= m - 1) idx[k++] = i + __builtin_ctz(m);
		if (k > limit) return -1;
	}
	for (; i < n; i++)
		if (h[i] * scale > t) idx[k++] = i;
	return k > limit ? -1 : k;
}

// By-value results for the kernels above: a Go variable whose address goes to C escapes to the
// heap, so a kernel that wrote through pointers would allocate on every call.
typedef struct { float m; double sum; int ok; } max_sum;
static max_sum row_max_v(const float *h, int n, float scale) { max_sum r; r.ok = row_max(h, n, scale, &r.m, &r.sum); return r; }
typedef struct { int cnt; double sum; } count_sum;
static count_sum row_count_sum_above_v(const float *h, int n, float scale, float t, float m) {
	count_sum r; row_count_sum_above(h, n, scale, t, m, &r.cnt, &r.sum); return r;
}
typedef struct { float mx; int cnt; } max_count;
static max_count row_max_pos_v(const float *p, int n) { max_count r; row_max_pos(p, n, &r.mx, &r.cnt); return r; }
*/
import "C"

import "unsafe"

func fptr(s []float32) *C.float { return (*C.float)(unsafe.Pointer(&s[0])) }

func kRowMax(h []float32, scale float32) (float32, float64, bool) {
	r := C.row_max_v(fptr(h), C.int(len(h)), C.float(scale))
	return float32(r.m), float64(r.sum), r.ok != 0
}

func kRowMaxPos(p []float32) (float32, int) {
	r := C.row_max_pos_v(fptr(p), C.int(len(p)))
	return float32(r.mx), int(r.cnt)
}

func kRowSumExp(h []float32, scale, m float32) float64 {
	return float64(C.row_sumexp(fptr(h), C.int(len(h)), C.float(scale), C.float(m)))
}

func kRowExpScaled(d, h []float32, scale, m, inv, c float32) {
	C.row_exp_scaled(fptr(d), fptr(h), C.int(len(h)), C.float(scale), C.float(m), C.float(inv), C.float(c))
}

func kRowSumExpStore(e, h []float32, scale, m float32) float64 {
	return float64(C.row_sumexp_store(fptr(e), fptr(h), C.int(len(h)), C.float(scale), C.float(m)))
}

// kRowSumExpStoreFused is kRowSumExpStore with the fused exponential; m must be the row's largest
// scale*h[i]. portable takes the lane-by-lane kernel whatever the CPU has.
func kRowSumExpStoreFused(e, h []float32, scale, m float32, portable bool) float64 {
	p := C.int(0)
	if portable {
		p = 1
	}
	return float64(C.row_sumexp_store_fused(fptr(e), fptr(h), C.int(len(h)), C.float(scale), C.float(m), p))
}

func kRowScale(d []float32, inv, c float32) {
	C.row_scale(fptr(d), C.int(len(d)), C.float(inv), C.float(c))
}

func kRowCountSumAbove(h []float32, scale, t, m float32) (int, float64) {
	r := C.row_count_sum_above_v(fptr(h), C.int(len(h)), C.float(scale), C.float(t), C.float(m))
	return int(r.cnt), float64(r.sum)
}

func kRowGatherAbove(h []float32, scale, t float32, idx []int32, limit int) (int, bool) {
	k := int(C.row_gather_above(fptr(h), C.int(len(h)), C.float(scale), C.float(t), (*C.int32_t)(unsafe.Pointer(&idx[0])), C.int(limit)))
	return k, k >= 0
}
