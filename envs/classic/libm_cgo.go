//go:build cgo

package classic

/*
#cgo CFLAGS: -O2 -fno-builtin-sin -fno-builtin-cos -fno-builtin-pow -fno-builtin-powf -fno-builtin-cosf -fno-builtin-sinf
#cgo LDFLAGS: -lm
#include <math.h>

// -fno-builtin-* keeps the compiler from folding pow(x, 2) into x*x or merging sin and cos into
// sincos: each call below is the C library's own function, as numpy and Python call it.
typedef struct { double s, c; } sc_t;
static sc_t lm_sincos(double x) { sc_t r; r.s = sin(x); r.c = cos(x); return r; }
static double lm_cos(double x) { return cos(x); }
static double lm_pow(double x, double y) { return pow(x, y); }
static float lm_cosf(float x) { return cosf(x); }
static float lm_sinf(float x) { return sinf(x); }

// The transcendental part of Acrobot's _dsdt: cos(t2), sin(t2), cos(a), cos(b), pow(dt1, 2), pow(dt2, 2).
typedef struct { double cos2, sin2, cosa, cosb, sq1, sq2; } acro_t;
static acro_t lm_acrobot(double t2, double a, double b, double dt1, double dt2, double two) {
	acro_t r;
	r.cos2 = cos(t2); r.sin2 = sin(t2); r.cosa = cos(a); r.cosb = cos(b);
	r.sq1 = pow(dt1, two); r.sq2 = pow(dt2, two);
	return r;
}

// Acrobot's observation and termination test: sin and cos of both angles, cos(t2 + t1).
typedef struct { double s1, c1, s2, c2, c12; } acro_obs_t;
static acro_obs_t lm_acrobot_obs(double t1, double t2, double t21) {
	acro_obs_t r;
	r.s1 = sin(t1); r.c1 = cos(t1); r.s2 = sin(t2); r.c2 = cos(t2); r.c12 = cos(t21);
	return r;
}

// Pendulum's step: pow(an, 2), pow(thdot, 2), powf(u, 2) and sin(th).
typedef struct { double an2, thdot2; float u2; double sinth; } pend_t;
static pend_t lm_pendulum(double an, double thdot, float u, double th, double two, float twof) {
	pend_t r;
	r.an2 = pow(an, two); r.thdot2 = pow(thdot, two); r.u2 = powf(u, twof); r.sinth = sin(th);
	return r;
}

// MountainCarContinuous's step: cos(x) and pow(a, 2).
typedef struct { double c, a2; } cp_t;
static cp_t lm_cos_pow2(double x, double a, double two) { cp_t r; r.c = cos(x); r.a2 = pow(a, two); return r; }
*/
import "C"

// LibmIdentical reports whether sin, cos and pow come from the C library numpy and CPython use, so
// that the dynamics are bit-identical to Gymnasium's on the same machine. Without cgo they come from
// Go's math package and agree only to about one ulp per call.
const LibmIdentical = true

func sinCos(x float64) (s, c float64) {
	r := C.lm_sincos(C.double(x))
	return float64(r.s), float64(r.c)
}

func cos(x float64) float64 { return float64(C.lm_cos(C.double(x))) }

// pow2 is pow(x, 2) as numpy computes np.float64 ** 2 and Python float ** 2: the C library's pow,
// which is not always x*x rounded.
func pow2(x float64) float64 { return float64(C.lm_pow(C.double(x), 2)) }

type acroTrig struct{ cos2, sin2, cosa, cosb, sq1, sq2 float64 }

func acrobotTrig(t2, a, b, dt1, dt2 float64) acroTrig {
	r := C.lm_acrobot(C.double(t2), C.double(a), C.double(b), C.double(dt1), C.double(dt2), 2)
	return acroTrig{float64(r.cos2), float64(r.sin2), float64(r.cosa), float64(r.cosb), float64(r.sq1), float64(r.sq2)}
}

func cosf(x float32) float32 { return float32(C.lm_cosf(C.float(x))) }
func sinf(x float32) float32 { return float32(C.lm_sinf(C.float(x))) }

type acroObs struct{ s1, c1, s2, c2, c12 float64 }

func acrobotObsTrig(t1, t2, t21 float64) acroObs {
	r := C.lm_acrobot_obs(C.double(t1), C.double(t2), C.double(t21))
	return acroObs{float64(r.s1), float64(r.c1), float64(r.s2), float64(r.c2), float64(r.c12)}
}

type pendTrig struct {
	an2, thDot2 float64
	u2          float32
	sinTh       float64
}

func pendulumTrig(an, thDot float64, u float32, th float64) pendTrig {
	r := C.lm_pendulum(C.double(an), C.double(thDot), C.float(u), C.double(th), 2, 2)
	return pendTrig{float64(r.an2), float64(r.thdot2), float32(r.u2), float64(r.sinth)}
}

// cosPow2 is (cos(x), pow(a, 2)) in one call.
func cosPow2(x, a float64) (float64, float64) {
	r := C.lm_cos_pow2(C.double(x), C.double(a), 2)
	return float64(r.c), float64(r.a2)
}
