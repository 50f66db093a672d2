//go:build !cgo || !amd64

package tensor

func widePack(n, k int, b, bp []float32) { panic("tensor: wide kernel without cgo on amd64") }

func wideSgemm(lo, hi, n, k int, a, b, bp, c []float32) {
	panic("tensor: wide kernel without cgo on amd64")
}

func wideSgemmRange(lo, hi, n, k int, a, b, bp, c, st, mx, mn, bad []float32) {
	panic("tensor: wide kernel without cgo on amd64")
}

const wideRangeState = 24
