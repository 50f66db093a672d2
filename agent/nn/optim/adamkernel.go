package optim

import "math"

// adamUpdateGo is Adam's update of one parameter in Go: m ← β1·m + c1·g, v ← β2·v + c2·g·g,
// w ← w − lrT·m/(√v + ε), with c1 = 1 − β1 and c2 = 1 − β2 in float32. The C kernel
// (adamUpdate, where cgo is on) computes the same expressions in the same order, so it writes
// the same bits; TestAdamKernelMatchesGo checks it.
func adamUpdateGo(w, m, v, g []float32, b1, b2, c1, c2, lrT, eps float32) {
	_, _, _ = m[len(w)-1:], v[len(w)-1:], g[len(w)-1:]
	for k := range w {
		gk := g[k]
		mk := b1*m[k] + c1*gk
		vk := b2*v[k] + c2*gk*gk
		m[k], v[k] = mk, vk
		w[k] -= lrT * mk / (float32(math.Sqrt(float64(vk))) + eps)
	}
}
