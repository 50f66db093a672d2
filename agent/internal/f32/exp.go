// Package f32 holds the float32 elementary functions of the hot loops (the LSTM's gates, the
// policy rows' softmax), where float64 math.Exp would cost as much as the matrix products. Its
// C twin is the k_exp/t_exp of the cgo kernels in agent/nn and agent/policy.
package f32

import "math"

// Exp returns e^x for float32 x with relative error below ~2e-7: range reduction by
// floor(x·log2 e + 0.5), then a degree-6 Taylor polynomial on |r| ≤ ln2/2. x is clamped to
// [-87, 88], so the result is finite and normal.
func Exp(x float32) float32 {
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
