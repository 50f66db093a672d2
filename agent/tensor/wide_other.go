//go:build !cgo || !amd64

package tensor

func wideSgemm(lo, hi, n, k int, a, b, c []float32) {
	panic("tensor: wide kernel without cgo on amd64")
}
