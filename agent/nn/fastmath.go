package nn

import (
	"github.com/sparsepcl/sparsepcl/agent/internal/f32"
)

// The networks evaluate millions of tanh per training step; float64 math.Exp would cost as much
// as the matrix products, so these are float32 versions accurate to a few ulp (checked against
// math in tests).

// exp32 is f32.Exp, named here for tanh32 and its tests.
func exp32(x float32) float32 { return f32.Exp(x) }

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

// tanhBackwardGo is TanhBackward in Go: d[k] *= 1 - a[k]² (the C kernel's reference).
func tanhBackwardGo(d, a []float32) {
	d = d[:len(a)]
	for k, v := range a {
		d[k] *= 1 - v*v
	}
}
