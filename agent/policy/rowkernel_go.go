//go:build !cgo || !amd64

package policy

import (
	"math"

	"github.com/sparsepcl/sparsepcl/agent/internal/f32"
)

// Pure-Go versions of the row kernels of rowkernel_cgo.go, with the same results up to the
// order of the float32 sums.

func kRowMax(h []float32, scale float32) (float32, float64, bool) {
	m := float32(math.Inf(-1))
	var bad float32
	var sum float64
	for _, x := range h {
		v := x * scale
		if v > m {
			m = v
		}
		bad += v - v
		sum += float64(v)
	}
	return m, sum, bad == 0
}

func kRowSumExp(h []float32, scale, m float32) float64 {
	const block = 256
	var total float64
	for b := 0; b < len(h); b += block {
		var s float32
		for _, x := range h[b:min(b+block, len(h))] {
			s += f32.Exp(x*scale - m)
		}
		total += float64(s)
	}
	return total
}

func kRowExpScaled(d, h []float32, scale, m, inv, c float32) {
	d = d[:len(h)]
	for i, x := range h {
		// As the C kernel: tiny probabilities become subnormals, then 0.
		if v := x*scale - m; v < -80 {
			d[i] = c * ((f32.Exp(v+64) * 1.60381089054863785e-28) * inv)
		} else {
			d[i] = c * (f32.Exp(v) * inv)
		}
	}
}

func kRowSumExpStore(e, h []float32, scale, m float32) float64 {
	const block = 256
	e = e[:len(h)]
	var total float64
	for b := 0; b < len(h); b += block {
		var s float32
		for i, x := range h[b:min(b+block, len(h))] {
			v := x*scale - m
			ev := f32.Exp(v)
			s += ev
			if v < -80 { // as kRowExpScaled takes it
				ev = f32.Exp(v+64) * 1.60381089054863785e-28
			}
			e[b+i] = ev
		}
		total += float64(s)
	}
	return total
}

func kRowScale(d []float32, inv, c float32) {
	for i, v := range d {
		d[i] = c * (v * inv)
	}
}

func kRowCountSumAbove(h []float32, scale, t, m float32) (int, float64) {
	n := 0
	var s float64
	for _, x := range h {
		if v := x * scale; v > t {
			n++
			s += float64(v - m)
		}
	}
	return n, s
}

func kRowMaxPos(p []float32) (float32, int) {
	var m float32
	n := 0
	for _, v := range p {
		if v > m {
			m = v
		}
		if v > 0 {
			n++
		}
	}
	return m, n
}

func kRowGatherAbove(h []float32, scale, t float32, idx []int32, limit int) (int, bool) {
	k := 0
	for i, x := range h {
		if x*scale > t {
			if k == limit {
				return -1, false
			}
			idx[k] = int32(i)
			k++
		}
	}
	return k, true
}
