package policy

import "fmt"

// The Rows functions apply a row operation to a row-major batch: z holds
// len(z)/k rows of k logits, dst the same shape, valid is nil or a mask of
// the same shape. They allocate nothing.

func checkBatch(fn string, k, nz, ndst int, valid []bool) int {
	if k <= 0 || nz%k != 0 {
		panic(fmt.Sprintf("policy.%s: %d logits is not a whole number of rows of %d", fn, nz, k))
	}
	if ndst != nz || (valid != nil && len(valid) != nz) {
		panic(fmt.Sprintf("policy.%s: dst (%d) and mask (%d) must match logits (%d)", fn, ndst, len(valid), nz))
	}
	return nz / k
}

func rowMask(valid []bool, r, k int) []bool {
	if valid == nil {
		return nil
	}
	return valid[r*k : (r+1)*k]
}

// SoftmaxRows applies Softmax to every row.
func SoftmaxRows[T Float](dst, z []T, k int, valid []bool) {
	rows := checkBatch("SoftmaxRows", k, len(z), len(dst), valid)
	for r := 0; r < rows; r++ {
		Softmax(dst[r*k:(r+1)*k], z[r*k:(r+1)*k], rowMask(valid, r, k))
	}
}

// LogSoftmaxRows applies LogSoftmax to every row; lse (nil or one per row)
// receives each row's LogSumExp.
func LogSoftmaxRows[T Float](dst, z []T, k int, valid []bool, lse []float64) {
	rows := checkBatch("LogSoftmaxRows", k, len(z), len(dst), valid)
	for r := 0; r < rows; r++ {
		v := LogSoftmax(dst[r*k:(r+1)*k], z[r*k:(r+1)*k], rowMask(valid, r, k))
		if lse != nil {
			lse[r] = v
		}
	}
}

// SparsemaxRows applies Sparsemax to every row; tau and support (each nil
// or one per row) receive the thresholds and support sizes.
func SparsemaxRows[T Float](dst, z []T, k int, valid []bool, tau []float64, support []int) {
	rows := checkBatch("SparsemaxRows", k, len(z), len(dst), valid)
	for r := 0; r < rows; r++ {
		t, s := Sparsemax(dst[r*k:(r+1)*k], z[r*k:(r+1)*k], rowMask(valid, r, k))
		if tau != nil {
			tau[r] = t
		}
		if support != nil {
			support[r] = s
		}
	}
}

// EntmaxRows applies Entmax to every row, like SparsemaxRows.
func EntmaxRows[T Float](dst, z []T, k int, valid []bool, alpha float64, tau []float64, support []int) {
	rows := checkBatch("EntmaxRows", k, len(z), len(dst), valid)
	for r := 0; r < rows; r++ {
		t, s := Entmax(dst[r*k:(r+1)*k], z[r*k:(r+1)*k], rowMask(valid, r, k), alpha)
		if tau != nil {
			tau[r] = t
		}
		if support != nil {
			support[r] = s
		}
	}
}
