//go:build !cgo || !amd64

package tensor

// firstNonFinite is the index of the first NaN or infinity in x, or -1.
func firstNonFinite(x []float32) int { return firstNonFiniteGo(x) }
