package nn

import "math"

// The LSTM evaluates ~14M sigmoids per training step at the paper's shapes;
// float64 math.Exp would cost as much as the matrix products, so these are
// float32 versions accurate to a few ulp (checked against math in tests).

// exp32 returns e^x for float32 x with relative error below ~2e-7.
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
	// Taylor polynomial of degree 6 on |r| <= ln2/2.
	p := 1 + r*(1+r*(0.5+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720))))))
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}

// sigmoid32 is 1/(1+e^-x).
func sigmoid32(x float32) float32 { return 1 / (1 + exp32(-x)) }

// tanh32 is tanh(x); small |x| use a series to keep relative accuracy.
func tanh32(x float32) float32 {
	if x > -0.125 && x < 0.125 {
		x2 := x * x
		return x * (1 + x2*(-1.0/3+x2*(2.0/15+x2*(-17.0/315))))
	}
	return 2/(1+exp32(-2*x)) - 1
}

// Tanh32 is the float32 tanh the networks of this package use, for callers that build their own
// layers and must match them.
func Tanh32(x float32) float32 { return tanh32(x) }
