// f32.h: the C twin of f32.Exp for the cgo kernels of agent/nn and agent/policy, written
// branch-free so that their loops vectorise: range reduction by round-to-nearest (adding 1.5·2^23)
// instead of floor(x·log2 e + 0.5), so results agree with f32.Exp up to rounding. Included with
// -I${SRCDIR}/../internal/f32; the go command does not see changes to this file when it decides
// what to rebuild, so after editing it run go build -a (or go clean -cache).
#ifndef SPARSEPCL_F32_H
#define SPARSEPCL_F32_H

#include <stdint.h>
#include <string.h>

// Vectorised clones of a kernel for AVX-512, AVX2 and the baseline, chosen at load time.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CLONES
#endif

// f32_exp returns e^x, x clamped to [-87, 88]; relative error below ~2e-7.
static inline float f32_exp(float x) {
	x = x > 88.0f ? 88.0f : x;
	x = x < -87.0f ? -87.0f : x;
	const float magic = 12582912.0f; // 1.5*2^23: adding it rounds to an integer
	float t = x * 1.44269504088896341f + magic;
	float n = t - magic;
	float r = x - n * 0.693359375f - n * -2.12194440e-4f;
	float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720))))));
	int32_t bits = ((int32_t)n + 127) << 23;
	float s;
	memcpy(&s, &bits, 4);
	return p * s;
}

#endif
