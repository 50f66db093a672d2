// Register tiles of c = a·b shared by the few-rows kernel (fewrows_cgo.go) and the wide kernel
// (wide_cgo.go). Each entry is summed with fused multiply-adds from 0, k in order, and stored as
// acc + 0, as OpenBLAS's micro-kernels add alpha*acc to a C that beta = 0 has zeroed (which turns
// -0 into +0). M, the number of rows, is a constant after inlining.
#include <immintrin.h>
#include <math.h>

// tile16 computes c[r][j:j+16] = a[r]·b[:, j:j+16] for the M <= 6 rows r, with 2M accumulators.
// With ahead > 0 each k step first prefetches the line of b ahead floats further along its row:
// when b is read in place each k is its own stream, more than the hardware prefetcher follows
// (a prefetch never faults).
static inline __attribute__((always_inline, target("avx2,fma"))) void tile16(int M, int k, const float *a, int lda,
		const float *b, int ldb, float *c, int ldc, int j, int ahead) {
	__m256 lo[6], hi[6];
	for (int r = 0; r < M; r++) lo[r] = hi[r] = _mm256_setzero_ps();
	for (int p = 0; p < k; p++) {
		const float *row = b + (long)p * ldb + j;
		if (ahead > 0) _mm_prefetch((const char *)(row + ahead), _MM_HINT_T0);
		__m256 w0 = _mm256_loadu_ps(row), w1 = _mm256_loadu_ps(row + 8);
		for (int r = 0; r < M; r++) {
			__m256 x = _mm256_set1_ps(a[(long)r * lda + p]);
			lo[r] = _mm256_fmadd_ps(x, w0, lo[r]);
			hi[r] = _mm256_fmadd_ps(x, w1, hi[r]);
		}
	}
	for (int r = 0; r < M; r++) {
		_mm256_storeu_ps(c + (long)r * ldc + j, _mm256_add_ps(lo[r], _mm256_setzero_ps()));
		_mm256_storeu_ps(c + (long)r * ldc + j + 8, _mm256_add_ps(hi[r], _mm256_setzero_ps()));
	}
}

// tile8 is tile16 over 8 columns, for M <= 8 rows.
static inline __attribute__((always_inline, target("avx2,fma"))) void tile8(int M, int k, const float *a, int lda,
		const float *b, int ldb, float *c, int ldc, int j) {
	__m256 acc[8];
	for (int r = 0; r < M; r++) acc[r] = _mm256_setzero_ps();
	for (int p = 0; p < k; p++) {
		__m256 w = _mm256_loadu_ps(b + (long)p * ldb + j);
		for (int r = 0; r < M; r++) acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(a[(long)r * lda + p]), w, acc[r]);
	}
	for (int r = 0; r < M; r++) _mm256_storeu_ps(c + (long)r * ldc + j, _mm256_add_ps(acc[r], _mm256_setzero_ps()));
}

// tile1 computes the column j of the M rows, one entry at a time.
static inline __attribute__((always_inline, target("avx2,fma"))) void tile1(int M, int k, const float *a, int lda,
		const float *b, int ldb, float *c, int ldc, int j) {
	for (int r = 0; r < M; r++) {
		float acc = 0;
		for (int p = 0; p < k; p++) acc = fmaf(a[(long)r * lda + p], b[(long)p * ldb + j], acc);
		c[(long)r * ldc + j] = acc + 0.0f;
	}
}
