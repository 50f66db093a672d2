package classic

import (
	"math"

	"github.com/sparsepcl/sparsepcl/envs/classic/nprand"
)

var (
	pdMaxSpeed  = 8.0
	pdMaxTorque = 2.0
	pdDt        = 0.05
	pdM         = 1.0
	pdL         = 1.0
	pdTwoPi     = 2 * piVar
	pdUCoef     = 3.0 / (pdM * (pdL * pdL)) // 3.0 / (m * l**2)
)

// pendulum is Pendulum-v1; its state is float64 throughout.
type pendulum struct {
	th, thDot float64
	g         float64
}

func (p *pendulum) reset(rng *nprand.Generator, b bounds, obs []float64) {
	p.th = rng.Uniform(b.low[0], b.high[0])
	p.thDot = rng.Uniform(b.low[1], b.high[1])
	p.observe(obs)
}

func (p *pendulum) observe(obs []float64) {
	s, c := sinCos(p.th)
	obs[0], obs[1], obs[2] = f32(c), f32(s), f32(p.thDot)
}

// angleNormalize is ((x + pi) % (2*pi)) - pi with numpy's float remainder (the sign of the divisor).
func angleNormalize(x float64) float64 {
	a := x + piVar
	mod := math.Mod(a, pdTwoPi)
	if mod != 0 {
		if (pdTwoPi < 0) != (mod < 0) {
			mod += pdTwoPi
		}
	} else {
		mod = math.Copysign(0, pdTwoPi)
	}
	return mod - piVar
}

// step is PendulumEnv.step for an action u already known to be a float32 in [-2, 2] (so the clip
// keeps it). u**2 is np.float32 ** 2 (the C library's powf); Python floats times u are float32.
func (p *pendulum) step(a float64, obs []float64) (float64, bool) {
	u := float32(a)
	tr := pendulumTrig(angleNormalize(p.th), p.thDot, u, p.th)
	costs := (tr.an2 + float64(0.1*tr.thDot2)) + float64(float32(0.001)*tr.u2)
	gl := float64(3*p.g) / float64(2*pdL)
	newThDot := p.thDot + float64((float64(gl*tr.sinTh)+float64(float32(pdUCoef)*u))*pdDt)
	newThDot = clip(newThDot, -pdMaxSpeed, pdMaxSpeed)
	newTh := p.th + float64(newThDot*pdDt)
	p.th, p.thDot = newTh, newThDot
	p.observe(obs)
	return -costs, false
}
