//go:build !cgo || !amd64

package optim

// adamUpdate is adamUpdateGo where the C kernel is not built.
func adamUpdate(w, m, v, g []float32, b1, b2, c1, c2, lrT, eps float32) {
	adamUpdateGo(w, m, v, g, b1, b2, c1, c2, lrT, eps)
}
