//go:build !cgo

package classic

import "math"

// LibmIdentical reports whether sin, cos and pow come from the C library numpy and CPython use, so
// that the dynamics are bit-identical to Gymnasium's on the same machine. Without cgo they come from
// Go's math package and agree only to about one ulp per call.
const LibmIdentical = false

func sinCos(x float64) (s, c float64) { return math.Sin(x), math.Cos(x) }
func cos(x float64) float64           { return math.Cos(x) }
func pow2(x float64) float64          { return x * x }

type acroTrig struct{ cos2, sin2, cosa, cosb, sq1, sq2 float64 }

func acrobotTrig(t2, a, b, dt1, dt2 float64) acroTrig {
	return acroTrig{math.Cos(t2), math.Sin(t2), math.Cos(a), math.Cos(b), dt1 * dt1, dt2 * dt2}
}

func cosf(x float32) float32 { return float32(math.Cos(float64(x))) }
func sinf(x float32) float32 { return float32(math.Sin(float64(x))) }

type acroObs struct{ s1, c1, s2, c2, c12 float64 }

func acrobotObsTrig(t1, t2, t21 float64) acroObs {
	return acroObs{math.Sin(t1), math.Cos(t1), math.Sin(t2), math.Cos(t2), math.Cos(t21)}
}

type pendTrig struct {
	an2, thDot2 float64
	u2          float32
	sinTh       float64
}

func pendulumTrig(an, thDot float64, u float32, th float64) pendTrig {
	return pendTrig{an * an, thDot * thDot, u * u, math.Sin(th)}
}

func cosPow2(x, a float64) (float64, float64) { return math.Cos(x), a * a }
