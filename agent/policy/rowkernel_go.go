//go:build !cgo || !amd64

package policy

import "math"

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
			s += exp32(x*scale - m)
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
			d[i] = c * ((exp32(v+64) * 1.60381089054863785e-28) * inv)
		} else {
			d[i] = c * (exp32(v) * inv)
		}
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

func kRowGatherAbove(h []float32, scale, t float32, idx []int32) int {
	k := 0
	for i, x := range h {
		if x*scale > t {
			idx[k] = int32(i)
			k++
		}
	}
	return k
}

// exp32 returns e^x for float32 x with relative error below ~2e-7 (nn's exp32).
func exp32(x float32) float32 {
	if x > 88 {
		x = 88
	} else if x < -87 {
		x = -87
	}
	const (
		log2e = 1.44269504088896341
		ln2hi = 0.693359375
		ln2lo = -2.12194440e-4
	)
	n := float32(math.Floor(float64(x*log2e + 0.5)))
	r := x - n*ln2hi - n*ln2lo
	p := 1 + r*(1+r*(0.5+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720))))))
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}
