package envbench

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// perRound divides xs by base round by round.
func perRound(xs, base []float64) []float64 {
	out := make([]float64, len(xs))
	for i := range xs {
		out[i] = xs[i] / base[i]
	}
	return out
}

// median is the middle of xs (the mean of the two middle values for an even count).
func median(xs []float64) float64 { return quantile(xs, 0.5) }

func scale(xs []float64, f float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * f
	}
	return out
}

// quantile is the q-quantile of xs (linear interpolation between order statistics).
func quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}

// spread formats the middle half of xs: how far single rounds stray from the median.
func spread(xs []float64, format string) string {
	return fmt.Sprintf(format+"-"+format, quantile(xs, 0.25), quantile(xs, 0.75))
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// threadEnv reports the BLAS/OpenMP thread settings the Python processes inherit.
func threadEnv() string {
	var parts []string
	for _, k := range []string{"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"} {
		v := os.Getenv(k)
		if v == "" {
			v = "unset"
		}
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, " ")
}
