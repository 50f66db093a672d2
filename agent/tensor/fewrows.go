package tensor

import "strings"

// The few-rows product: c = a·b for a handful of rows (the sampler's policy forward, one row per
// env copy) against a wide b (the output layer, 64 x |A|). OpenBLAS packs the whole of b into its
// panel layout on every call, which for a few rows costs as much as the product and wakes its
// threads for a product of well under a millisecond. This kernel streams b once instead, with
// every row's accumulators in registers, and computes each entry exactly as OpenBLAS's
// micro-kernel does (fused multiply-adds from zero in the order of k), so the results are the
// same bits (TestFewRowsMatchesOpenBLAS). Only an OpenBLAS engine on a CPU with AVX2 and FMA
// takes it.

const (
	// fewRowsMax is the most rows the kernel takes.
	fewRowsMax = 8
	// fewRowsMinCols is the fewest columns: below it the product is too small to matter.
	fewRowsMinCols = 256
	// fewRowsMaxInner is the largest inner dimension: OpenBLAS cuts longer ones into blocks
	// (changing the order of the sums), and the networks' hidden layers are 64 wide.
	fewRowsMaxInner = 256
	// fewRowsThreadedMin is the product size (m*n*k) above which OpenBLAS runs on its threads.
	fewRowsThreadedMin = 4 * 65536
	// fewRowsParallelMin is the product size (m*n*k) from which the columns are split over
	// Workers(0) goroutines (8 copies at |A| = 15,625 and 64 hidden units: 8M).
	fewRowsParallelMin = 1 << 22
	// fewRowsBlock is the column block a goroutine takes at a time (a multiple of 8).
	fewRowsBlock = 2048
)

// fewRowsMatchesCore reports whether OpenBLAS, running the named core (openblas_get_corename),
// sums in the few-rows kernel's order: the AVX2 sgemm kernel of its Haswell and Zen cores does;
// an AVX-512 core's (SkylakeX, Cooperlake, SapphireRapids) does not, nor does an older one's.
func fewRowsMatchesCore(core string) bool {
	switch strings.ToLower(strings.TrimSpace(core)) {
	case "haswell", "zen":
		return true
	}
	return false
}

// fewRows reports whether the product of the given shape and flags goes to the few-rows kernel,
// given OpenBLAS's thread count. Only the products whose bits OpenBLAS computes in the kernel's
// order are taken (measured on OpenBLAS 0.3.21, Zen kernels, and checked for every shape of a
// grid by TestFewRowsMatchesOpenBLAS): up to 3 rows always; 4 to 8 rows only when OpenBLAS
// splits the product over threads, which it does from m*n*k above 65536 times its default
// GEMM_MULTITHREAD_THRESHOLD of 4 (on one thread, the micro-kernel for 4 and more rows of the
// row-major product sums in another order).
func fewRows(transA, transB bool, m, n, k int, alpha, beta float32, threads int) bool {
	if transA || transB || alpha != 1 || beta != 0 || m < 1 || m > fewRowsMax || n < fewRowsMinCols || k < 1 || k > fewRowsMaxInner {
		return false
	}
	return m <= 3 || (threads >= 2 && m*n*k > fewRowsThreadedMin)
}

// fewRowsProduct computes c = a·b (row-major, dense strides) with the few-rows kernel, over
// column blocks split among goroutines when the product is large enough; each column is
// computed the same way whichever goroutine takes it.
func fewRowsProduct(m, n, k int, a, b, c []float32) {
	if m*n*k < fewRowsParallelMin {
		fewRowsSgemm(m, k, a, k, b, n, c, n, 0, n)
		return
	}
	ParallelRows(n, fewRowsBlock, Workers(0), RowFunc(func(_, lo, hi int) {
		fewRowsSgemm(m, k, a, k, b, n, c, n, lo, hi)
	}))
}
