//go:build !cgo || !amd64

package nn

// TanhInto writes tanh(src) into dst (same length): the tanh of this package's networks.
func TanhInto(dst, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = tanh32(v)
	}
}
