package classic

import "github.com/sparsepcl/sparsepcl/envs/classic/nprand"

// CartPole-v1's constants, computed at run time in float64 as Gymnasium's __init__ computes them (Go
// constant expressions would be exact, and could round differently).
var (
	cpGravity        = 9.8
	cpMassCart       = 1.0
	cpMassPole       = 0.1
	cpTotalMass      = cpMassPole + cpMassCart
	cpLength         = 0.5
	cpPoleMassLength = cpMassPole * cpLength
	cpForceMag       = 10.0
	cpTau            = 0.02
	cpFourThirds     = 4.0 / 3.0
	cpThetaThreshold = 12 * 2 * piVar / 360
	cpXThreshold     = 2.4
)

var piVar = 3.141592653589793 // math.pi, as a variable so expressions with it round step by step

type cartPole struct {
	x, xDot, theta, thetaDot float64
	suttonBarto              bool
}

func (c *cartPole) reset(rng *nprand.Generator, b bounds, obs []float64) {
	c.x = rng.Uniform(b.low[0], b.high[0])
	c.xDot = rng.Uniform(b.low[0], b.high[0])
	c.theta = rng.Uniform(b.low[0], b.high[0])
	c.thetaDot = rng.Uniform(b.low[0], b.high[0])
	c.observe(obs)
}

func (c *cartPole) observe(obs []float64) {
	obs[0] = f32(c.x)
	obs[1] = f32(c.xDot)
	obs[2] = f32(c.theta)
	obs[3] = f32(c.thetaDot)
}

// step is CartPoleEnv.step with the Euler integrator, operation for operation. The explicit float64
// conversions round every product before it is added, so no platform fuses them into an FMA.
func (c *cartPole) step(a float64, obs []float64) (float64, bool) {
	force := -cpForceMag
	if a == 1 {
		force = cpForceMag
	}
	sinT, cosT := sinCos(c.theta)
	temp := (force + float64(float64(cpPoleMassLength*float64(c.thetaDot*c.thetaDot))*sinT)) / cpTotalMass
	thetaAcc := (float64(cpGravity*sinT) - float64(cosT*temp)) /
		float64(cpLength*(cpFourThirds-float64(cpMassPole*float64(cosT*cosT))/cpTotalMass))
	xAcc := temp - float64(float64(cpPoleMassLength*thetaAcc)*cosT)/cpTotalMass
	c.x = c.x + float64(cpTau*c.xDot)
	c.xDot = c.xDot + float64(cpTau*xAcc)
	c.theta = c.theta + float64(cpTau*c.thetaDot)
	c.thetaDot = c.thetaDot + float64(cpTau*thetaAcc)
	terminated := c.x < -cpXThreshold || c.x > cpXThreshold || c.theta < -cpThetaThreshold || c.theta > cpThetaThreshold
	c.observe(obs)
	switch {
	case !c.suttonBarto:
		return 1, terminated
	case terminated:
		return -1, true
	default:
		return 0, false
	}
}
