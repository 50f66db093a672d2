package tensor

import "sync"

// The wide product: c = a·b for many rows against a wide b with a short inner dimension, the
// shape of a HalfCheetah 5^6 output layer in training (2,525 rows x 65 times 65 x 15,625). There
// OpenBLAS first zeroes all of c (its beta pass) and packs both operands, and takes about 1.3
// times this kernel's CPU time (BenchmarkWideVsOpenBLAS). This kernel packs only b, into panels
// of 16 columns (4 MB, 1-2 ms at 5^6), keeps a 6 x 16 tile of c in registers over the whole
// inner dimension and writes each entry once; a block of b's columns stays in L2 while a block
// of rows runs over it. Each entry is summed with fused multiply-adds from zero, k in order, the
// few-rows kernel's order (TestWideMatchesFewRows), so a row's results do not depend on how the
// rows are split over goroutines. They are not OpenBLAS's bits, which change with its thread
// count here anyway.

const (
	// wideMinCols is the fewest columns the kernel takes: at 729 (a 3^6 grid) the product alone
	// is a little faster but the training step was not measurably (docs/speed.md), so 3^6 and the
	// algorithmic tasks keep OpenBLAS's products and their bits.
	wideMinCols = 4096
	// wideMaxInner is the largest inner dimension: a tile's 16 columns of b are read from L2 once
	// per k, which stays cheap only while the inner dimension is short.
	wideMaxInner = 128
	// wideRowBlock is the block of rows a goroutine takes at a time (a multiple of the tile's 6).
	wideRowBlock = 240
)

// wide reports whether the product of the given shape and flags goes to the wide kernel.
func wide(transA, transB bool, m, n, k int, alpha, beta float32) bool {
	return !transA && !transB && alpha == 1 && beta == 0 && m > fewRowsMax && n >= wideMinCols && k >= 1 && k <= wideMaxInner
}

// wideProduct computes c = a·b (row-major, dense strides) with the wide kernel, over blocks of
// rows split among Workers(0) goroutines; with r not nil, also the range of every row (see
// RowRange).
func wideProduct(m, n, k int, a, b, c []float32, r *RowRange) {
	j := wideJobs.Get().(*wideJob)
	defer wideJobs.Put(j)
	size := widePanels(n, k)
	if cap(j.bp) < size {
		j.bp = make([]float32, size)
	}
	*j = wideJob{n: n, k: k, a: a, b: b, bp: j.bp[:size], c: c, st: j.st}
	if r != nil {
		r.size(m)
		if cap(j.st) < m*wideRangeState {
			j.st = make([]float32, m*wideRangeState)
		}
		j.mx, j.mn, j.bad = r.Max, r.Min, r.bad
	}
	widePack(n, k, b, j.bp)
	ParallelRows(m, wideRowBlock, Workers(0), j)
	*j = wideJob{bp: j.bp, st: j.st} // the pool keeps the scratch, not the operands
	if r != nil {
		r.Valid = true
	}
}

// wideJob is one wide product's rows (a RowJob) with b's packed panels bp, and the rows' range
// when mx is not nil (st its scratch).
type wideJob struct {
	n, k            int
	a, b, bp, c     []float32
	st, mx, mn, bad []float32
}

func (j *wideJob) Rows(_, lo, hi int) {
	if j.mx == nil {
		wideSgemm(lo, hi, j.n, j.k, j.a, j.b, j.bp, j.c)
		return
	}
	wideSgemmRange(lo, hi, j.n, j.k, j.a, j.b, j.bp, j.c, j.st[lo*wideRangeState:], j.mx, j.mn, j.bad)
}

// wideJobs keep the jobs of wideProduct, with their packed panels, between calls (a training step
// makes several products of the same shapes), so a product allocates nothing once its shape has
// been seen.
var wideJobs = sync.Pool{New: func() any { return new(wideJob) }}

// widePanels is the size of b's packed panels (at least one float, so that the kernel always
// gets an address).
func widePanels(n, k int) int { return max(1, n/16*16*k) }
