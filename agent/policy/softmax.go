package policy

import "math"

// Softmax writes softmax(z) into dst (same length as z; dst must not alias z
// unless they are the same slice, which is allowed). Masked and -Inf entries
// get probability 0 and take no part in the normalisation, so masking equals
// dropping the entries. A NaN or +Inf usable logit, or no usable entry at
// all, gives a NaN row.
func Softmax[T Float](dst, z []T, valid []bool) {
	checkRow("Softmax", len(z), len(dst), valid)
	softmaxLSE(dst, z, valid)
}

// softmaxLSE is Softmax that also returns LogSumExp(z) and the number of usable entries, from
// the same pass of exponentials (NaN and 0 when the row is NaN).
func softmaxLSE[T Float](dst, z []T, valid []bool) (float64, int) {
	m, n, bad := maxUsable(z, valid)
	if bad || n == 0 {
		fillNaN(dst)
		return math.NaN(), 0
	}
	var sum float64
	for i := range z {
		if !usable(z, valid, i) {
			dst[i] = 0
			continue
		}
		e := math.Exp(float64(z[i]) - m)
		sum += e
		dst[i] = T(e)
	}
	inv := 1 / sum
	for i := range dst {
		dst[i] = T(float64(dst[i]) * inv)
	}
	return m + math.Log(sum), n
}

// LogSumExp returns log(sum_i exp(z_i)) over the usable entries, computed
// after subtracting the maximum. It is the soft value operator: the soft
// value of a state is temp*LogSumExp(Q/temp), and its gradient is
// Softmax(z). No usable entry gives -Inf; a NaN or +Inf entry gives NaN.
func LogSumExp[T Float](z []T, valid []bool) float64 {
	if valid != nil && len(valid) != len(z) {
		checkRow("LogSumExp", len(z), len(z), valid)
	}
	m, n, bad := maxUsable(z, valid)
	if bad {
		return math.NaN()
	}
	if n == 0 {
		return math.Inf(-1)
	}
	var sum float64
	for i := range z {
		if usable(z, valid, i) {
			sum += math.Exp(float64(z[i]) - m)
		}
	}
	return m + math.Log(sum)
}

// LogSoftmax writes log softmax(z) into dst and returns LogSumExp(z).
// Masked entries are written as -Inf (their log-probability): callers must
// not multiply them by zero weights.
func LogSoftmax[T Float](dst, z []T, valid []bool) float64 {
	checkRow("LogSoftmax", len(z), len(dst), valid)
	lse := LogSumExp(z, valid)
	if math.IsNaN(lse) || math.IsInf(lse, -1) {
		fillNaN(dst)
		return lse
	}
	for i := range z {
		if !usable(z, valid, i) {
			dst[i] = T(math.Inf(-1))
			continue
		}
		dst[i] = T(float64(z[i]) - lse)
	}
	return lse
}

// SoftmaxJVP writes J v into dst, where J is the Jacobian of softmax at the
// probabilities p: (J v)_i = p_i (v_i - <p, v>). J is symmetric, so this is
// also the vector-Jacobian product. dst may alias v.
func SoftmaxJVP[T Float](dst, p, v []T) {
	checkRow("SoftmaxJVP", len(p), len(dst), nil)
	checkRow("SoftmaxJVP", len(p), len(v), nil)
	var dot float64
	for i := range p {
		if p[i] != 0 {
			dot += float64(p[i]) * float64(v[i])
		}
	}
	for i := range p {
		dst[i] = T(float64(p[i]) * (float64(v[i]) - dot))
	}
}
