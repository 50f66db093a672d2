//go:build !cgo || !amd64

package tensor

func fewRowsSupported() bool { return false }

func fewRowsSgemm(m, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, lo, hi int) {
	panic("tensor: few-rows kernel without cgo on amd64")
}
