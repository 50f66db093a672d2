package classic

import "math"

// numpy computes np.cos and np.sin of float32 values with its own SIMD kernel (Cody-Waite reduction
// by pi/2 in three parts and short minimax polynomials, every step a float32 fused multiply-add on
// FMA hardware), not with the C library. Acrobot's first observation takes cos and sin of the float32
// initial state that way, so cosF32 and sinF32 repeat that kernel's arithmetic step by step.
const (
	f32TwoOverPi  float32 = 0x1.45f306p-1
	f32PiO2High   float32 = -0x1.921fb0p+00
	f32PiO2Med    float32 = -0x1.5110b4p-22
	f32PiO2Low    float32 = -0x1.846988p-48
	f32RintMagic  float32 = 0x1.800000p+23
	f32MaxCodyCos float32 = 71476.0625 // beyond these the kernel's reduction is not trusted
	f32MaxCodySin float32 = 117435.992
	f32CosInvF8   float32 = 0x1.98e616p-16
	f32CosInvF6   float32 = -0x1.6c06dcp-10
	f32CosInvF4   float32 = 0x1.55553cp-05
	f32CosInvF2   float32 = -0x1.000000p-01
	f32CosInvF0   float32 = 0x1.000000p+00
	f32SinInvF9   float32 = 0x1.7d3bbcp-19
	f32SinInvF7   float32 = -0x1.a06bbap-13
	f32SinInvF5   float32 = 0x1.11119ap-07
	f32SinInvF3   float32 = -0x1.555556p-03
	f64Float32Mid         = 1 << 28 // the low mantissa bits of a float64 halfway between two float32
)

// fma32 is a*b+c rounded once to float32. a*b is exact in float64; the sum's rounding error is
// recovered exactly (TwoSum) and decides the rare case where the float64 sum sits exactly halfway
// between two float32 values, so the result never suffers double rounding.
func fma32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	bb := s - p
	e := (p - (s - bb)) + (float64(c) - bb)
	r := float32(s)
	if e == 0 || math.IsInf(s, 0) || math.IsNaN(s) {
		return r
	}
	if math.Float64bits(s)&(1<<29-1) != f64Float32Mid {
		return r
	}
	// s is a float32 midpoint: the exact sum lies on e's side of it.
	up := float32(math.Nextafter(s, math.Inf(1)))
	down := float32(math.Nextafter(s, math.Inf(-1)))
	if e > 0 {
		return up
	}
	return down
}

func sinCosF32(x float32, wantCos bool) float32 {
	if x != x || (x == 0 && !wantCos) {
		return x // NaN, and sin(±0) = ±0 as numpy returns it
	}
	limit := f32MaxCodySin
	if wantCos {
		limit = f32MaxCodyCos
	}
	if abs := float32(math.Abs(float64(x))); abs > limit {
		// numpy falls back to the C library's cosf/sinf beyond the kernel's range.
		if wantCos {
			return cosf(x)
		}
		return sinf(x)
	}
	q := fma32(x, f32TwoOverPi, f32RintMagic)
	q = q - f32RintMagic
	r := fma32(q, f32PiO2High, x)
	r = fma32(q, f32PiO2Med, r)
	r = fma32(q, f32PiO2Low, r)
	r2 := r * r
	iq := int32(q)
	if wantCos {
		iq++
	}
	var v float32
	if iq&1 == 0 {
		v = fma32(f32SinInvF9, r2, f32SinInvF7)
		v = fma32(v, r2, f32SinInvF5)
		v = fma32(v, r2, f32SinInvF3)
		v = v * r2
		v = fma32(v, r, r)
	} else {
		v = fma32(f32CosInvF8, r2, f32CosInvF6)
		v = fma32(v, r2, f32CosInvF4)
		v = fma32(v, r2, f32CosInvF2)
		v = fma32(v, r2, f32CosInvF0)
	}
	if iq&2 != 0 {
		v = 0 - v
	}
	return v
}

func cosF32(x float32) float32 { return sinCosF32(x, true) }
func sinF32(x float32) float32 { return sinCosF32(x, false) }
