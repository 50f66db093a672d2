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

// kRowSumExpStoreFused is kRowSumExpStore with the fused exponential (expFused). portable has
// no effect here: there is one kernel.
func kRowSumExpStoreFused(e, h []float32, scale, m float32, portable bool) float64 {
	const block = 256
	e = e[:len(h)]
	var total float64
	for b := 0; b < len(h); b += block {
		var s float32
		for i, x := range h[b:min(b+block, len(h))] {
			// The conversion keeps the product rounded apart (Go may fuse x*scale - m), so that
			// v <= 0 as expFused needs: m is the largest rounded x*scale.
			v := float32(x*scale) - m
			ev := expFused(v)
			s += ev
			if v < -80 {
				ev = expFused(v+64) * 1.60381089054863785e-28
			}
			e[b+i] = ev
		}
		total += float64(s)
	}
	return total
}

// expFused is the C kernels' fused exponential (f32.Exp's polynomial, each multiply-add rounded
// once) for x <= 0. A float32 multiply-add rounded once is taken here as the float64 one rounded
// to float32, which can differ from it in the last bit (double rounding), rarely.
func expFused(x float32) float32 {
	if x < -87 {
		x = -87
	}
	fma := func(a, b, c float32) float32 { return float32(math.FMA(float64(a), float64(b), float64(c))) }
	const magic = 12582912
	n := fma(x, 1.44269504088896341, magic) - magic
	r := fma(n, 2.12194440e-4, fma(n, -0.693359375, x))
	p := fma(fma(fma(fma(fma(fma(1.0/720, r, 1.0/120), r, 1.0/24), r, 1.0/6), r, 0.5), r, 1), r, 1)
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
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
