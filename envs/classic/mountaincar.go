package classic

import (
	"math"

	"github.com/sparsepcl/sparsepcl/envs/classic/nprand"
)

var (
	mcMinPosition = -1.2
	mcMaxPosition = 0.6
	mcMaxSpeed    = 0.07
	mcGoal        = 0.5
	mcForce       = 0.001
	mcGravity     = 0.0025
	mccGoal       = 0.45
	mccPower      = 0.0015
)

// f32 rounds to float32, as np.array(..., dtype=np.float32) does.
func f32(x float64) float64 { return float64(float32(x)) }

// mountainCar is MountainCar-v0. Its state stays float64 throughout (np.float64 scalars, and the
// Python int 0 after a stop at the left wall, which has the same value).
type mountainCar struct {
	position, velocity float64
	goalVelocity       float64
}

func (m *mountainCar) reset(rng *nprand.Generator, b bounds, obs []float64) {
	m.position = rng.Uniform(b.low[0], b.high[0])
	m.velocity = 0
	obs[0], obs[1] = f32(m.position), f32(m.velocity)
}

func (m *mountainCar) step(a float64, obs []float64) (float64, bool) {
	push := float64((a - 1) * mcForce)
	gravity := float64(cos(float64(3*m.position)) * -mcGravity)
	v := m.velocity + (push + gravity)
	v = clip(v, -mcMaxSpeed, mcMaxSpeed)
	p := m.position + v
	p = clip(p, mcMinPosition, mcMaxPosition)
	if p == mcMinPosition && v < 0 {
		v = 0
	}
	m.position, m.velocity = p, v
	obs[0], obs[1] = f32(p), f32(v)
	return -1, p >= mcGoal && v >= m.goalVelocity
}

// clip is np.clip of one float64: NaN stays NaN.
func clip(x, lo, hi float64) float64 {
	if math.IsNaN(x) {
		return x
	}
	return math.Min(math.Max(x, lo), hi)
}

// numpy 2 types the values MountainCarContinuous-v0 computes with in three ways, and the type decides
// the arithmetic: np.float64 (double), np.float32 (single) and Python numbers, which are "weak": in an
// operation with an np.float32 they are cast to float32 first (NEP 50), comparisons included.
type kind uint8

const (
	kF64 kind = iota // np.float64
	kF32             // np.float32
	kPy              // a Python float or int
)

// pv is a value with its numpy type.
type pv struct {
	v float64
	k kind
}

// single reports whether an operation between p and q is done in float32.
func single(p, q pv) bool {
	return (p.k == kF32 && q.k != kF64) || (q.k == kF32 && p.k != kF64)
}

func (p pv) add(q pv) pv {
	if single(p, q) {
		return pv{float64(float32(p.v) + float32(q.v)), kF32}
	}
	k := kPy
	if p.k != kPy || q.k != kPy {
		k = kF64
	}
	return pv{p.v + q.v, k}
}

// operands returns p and q as numpy compares them: rounded to float32 when the operation is single.
func operands(p, q pv) (float64, float64) {
	if single(p, q) {
		return float64(float32(p.v)), float64(float32(q.v))
	}
	return p.v, q.v
}

func (p pv) gt(q pv) bool { a, b := operands(p, q); return a > b }
func (p pv) lt(q pv) bool { a, b := operands(p, q); return a < b }
func (p pv) ge(q pv) bool { a, b := operands(p, q); return a >= b }
func (p pv) eq(q pv) bool { a, b := operands(p, q); return a == b }

func py(x float64) pv { return pv{x, kPy} }

// mountainCarContinuous is MountainCarContinuous-v0. Reset leaves a float64 state; every step stores a
// float32 one, so from the second step on numpy does most of the arithmetic in float32.
type mountainCarContinuous struct {
	position, velocity pv
	goalVelocity       float64
}

func (m *mountainCarContinuous) reset(rng *nprand.Generator, b bounds, obs []float64) {
	m.position = pv{rng.Uniform(b.low[0], b.high[0]), kF64}
	m.velocity = pv{0, kF64}
	obs[0], obs[1] = f32(m.position.v), f32(m.velocity.v)
}

// step is Continuous_MountainCarEnv.step for an action a already known to be a float32 in [-1, 1]
// (so min(max(a, -1), 1) is a itself, an np.float32).
func (m *mountainCarContinuous) step(a float64, obs []float64) (float64, bool) {
	force := float32(a)
	// force * self.power: np.float32 times a Python float, in float32.
	fp := force * float32(mccPower)
	// math.cos(3 * position): 3 * position keeps position's type, then cos in double.
	x := float64(3 * m.position.v)
	if m.position.k == kF32 {
		x = float64(3 * float32(m.position.v))
	}
	c, force2 := cosPow2(x, float64(force))
	// float32 minus a Python float: float32.
	dv := pv{float64(fp - float32(float64(0.0025*c))), kF32}
	v := m.velocity.add(dv)
	if v.gt(py(mcMaxSpeed)) {
		v = py(mcMaxSpeed)
	}
	if v.lt(py(-mcMaxSpeed)) {
		v = py(-mcMaxSpeed)
	}
	p := m.position.add(v)
	if p.gt(py(mcMaxPosition)) {
		p = py(mcMaxPosition)
	}
	if p.lt(py(mcMinPosition)) {
		p = py(mcMinPosition)
	}
	if p.eq(py(mcMinPosition)) && v.lt(py(0)) {
		v = py(0)
	}
	terminated := p.ge(py(mccGoal)) && v.ge(py(m.goalVelocity))
	reward := 0.0
	if terminated {
		reward = 100.0
	}
	reward = reward - float64(force2*0.1)
	m.position = pv{f32(p.v), kF32}
	m.velocity = pv{f32(v.v), kF32}
	obs[0], obs[1] = m.position.v, m.velocity.v
	return reward, terminated
}
