package classic

import (
	"math"

	"github.com/sparsepcl/sparsepcl/envs/classic/nprand"
)

// Acrobot-v1's constants ("book" dynamics, no torque noise), as AcrobotEnv defines them, with the
// constant sub-expressions of _dsdt evaluated in Python's left-to-right order.
var (
	acDt       = 0.2
	acDt2      = acDt / 2.0
	acDt6      = acDt / 6.0
	acM1       = 1.0
	acM2       = 1.0
	acL1       = 1.0
	acLC1      = 0.5
	acLC2      = 0.5
	acI1       = 1.0
	acI2       = 1.0
	acG        = 9.8
	acMaxVel1  = 4 * piVar
	acMaxVel2  = 9 * piVar
	acHalfPi   = piVar / 2.0
	acTwoPi    = piVar - -piVar
	acM1LC1Sq  = acM1 * (acLC1 * acLC1) // m1 * lc1**2 (0.5**2 is exact)
	acL1SqLC2  = acL1*acL1 + acLC2*acLC2
	acTwoL1LC2 = 2 * acL1 * acLC2
	acLC2Sq    = acLC2 * acLC2
	acL1LC2    = acL1 * acLC2
	acM2LC2G   = acM2 * acLC2 * acG
	acNegM2L1  = -acM2 * acL1 * acLC2
	acTwoM2L1  = 2 * acM2 * acL1 * acLC2
	acPhi1Coef = (acM1*acLC1 + acM2*acL1) * acG
	acM2L1LC2  = acM2 * acL1 * acLC2
	acDenConst = acM2*acLC2Sq + acI2
	acTorque   = [3]float64{-1, 0, 1}
)

type acrobot struct {
	s [4]float64
}

func (e *acrobot) reset(rng *nprand.Generator, b bounds, obs []float64) {
	// np_random.uniform(...).astype(np.float32): the state starts as float32 values.
	var s32 [4]float32
	for i := range s32 {
		s32[i] = float32(rng.Uniform(b.low[0], b.high[0]))
		e.s[i] = float64(s32[i])
	}
	// _get_ob on that float32 state: numpy's own float32 cos and sin.
	obs[0] = float64(cosF32(s32[0]))
	obs[1] = float64(sinF32(s32[0]))
	obs[2] = float64(cosF32(s32[1]))
	obs[3] = float64(sinF32(s32[1]))
	obs[4] = float64(s32[2])
	obs[5] = float64(s32[3])
}

// dsdt is AcrobotEnv._dsdt for the "book" dynamics: the derivative of (theta1, theta2, dtheta1,
// dtheta2) under torque a (the fifth component's derivative is 0).
func acrobotDsdt(y *[4]float64, a float64) (d [4]float64) {
	theta1, theta2, dtheta1, dtheta2 := y[0], y[1], y[2], y[3]
	t := acrobotTrig(theta2, (theta1+theta2)-acHalfPi, theta1-acHalfPi, dtheta1, dtheta2)
	d1 := ((acM1LC1Sq + float64(acM2*(acL1SqLC2+float64(acTwoL1LC2*t.cos2)))) + acI1) + acI2
	d2 := float64(acM2*(acLC2Sq+float64(acL1LC2*t.cos2))) + acI2
	phi2 := float64(acM2LC2G * t.cosa)
	phi1 := ((float64(float64(acNegM2L1*t.sq2)*t.sin2) -
		float64(float64(float64(acTwoM2L1*dtheta2)*dtheta1)*t.sin2)) +
		float64(acPhi1Coef*t.cosb)) + phi2
	num := ((a + float64(float64(d2/d1)*phi1)) - float64(float64(acM2L1LC2*t.sq1)*t.sin2)) - phi2
	den := acDenConst - pow2(d2)/d1
	ddtheta2 := num / den
	ddtheta1 := -(float64(d2*ddtheta2) + phi1) / d1
	return [4]float64{dtheta1, dtheta2, ddtheta1, ddtheta2}
}

// wrapLoopLimit bounds the angles wrapAngle reduces by Gymnasium's loop of subtractions (at most
// about a million of them); only reset bounds far outside the physical range get beyond it.
const wrapLoopLimit = 1 << 22

// wrapAngle is Gymnasium's wrap(x, -pi, pi): repeated subtraction or addition of 2*pi, rounding each
// time. Beyond wrapLoopLimit, where Gymnasium's loop would run for a long time (and forever for an
// infinite angle), the angle is first reduced with math.Mod, and an infinite one becomes NaN.
func wrapAngle(x float64) float64 {
	if math.IsInf(x, 0) {
		return math.NaN()
	}
	if math.Abs(x) > wrapLoopLimit {
		x = math.Mod(x, acTwoPi)
	}
	for x > piVar {
		x = x - acTwoPi
	}
	for x < -piVar {
		x = x + acTwoPi
	}
	return x
}

// bound is Python's min(max(x, lo), hi).
func bound(x, lo, hi float64) float64 {
	if lo > x {
		x = lo
	}
	if hi < x {
		x = hi
	}
	return x
}

// step is AcrobotEnv.step: one rk4 step of length dt over (state, torque), in the order of
// gymnasium's rk4 (y0 + dt/2*k1, ..., y0 + dt/6*(k1 + 2*k2 + 2*k3 + k4)), then wrap and bound.
func (e *acrobot) step(a float64, obs []float64) (float64, bool) {
	torque := acTorque[int(a)]
	y0 := e.s
	k1 := acrobotDsdt(&y0, torque)
	var y [4]float64
	for i := range y {
		y[i] = y0[i] + float64(acDt2*k1[i])
	}
	k2 := acrobotDsdt(&y, torque)
	for i := range y {
		y[i] = y0[i] + float64(acDt2*k2[i])
	}
	k3 := acrobotDsdt(&y, torque)
	for i := range y {
		y[i] = y0[i] + float64(acDt*k3[i])
	}
	k4 := acrobotDsdt(&y, torque)
	for i := range y {
		y[i] = y0[i] + float64(acDt6*(((k1[i]+float64(2*k2[i]))+float64(2*k3[i]))+k4[i]))
	}
	// The torque component integrates to torque + dt/6*(0+0+0+0): it is never read again.
	y[0] = wrapAngle(y[0])
	y[1] = wrapAngle(y[1])
	y[2] = bound(y[2], -acMaxVel1, acMaxVel1)
	y[3] = bound(y[3], -acMaxVel2, acMaxVel2)
	e.s = y
	o := acrobotObsTrig(y[0], y[1], y[1]+y[0])
	terminated := -o.c1-o.c12 > 1.0
	obs[0], obs[1], obs[2], obs[3] = f32(o.c1), f32(o.s1), f32(o.c2), f32(o.s2)
	obs[4], obs[5] = f32(y[2]), f32(y[3])
	if terminated {
		return 0, true
	}
	return -1, false
}
