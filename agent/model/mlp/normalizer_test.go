package mlp

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The running statistics equal the direct mean and variance of everything seen, however the
// rows arrive; Apply standardises and clips.
func TestNormalizerMatchesDirectStatistics(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const dim = 2
	var all []float32
	n := NewNormalizer(dim)
	for _, chunk := range []int{1, 7, 30, 2} {
		rows := make([]float32, chunk*dim)
		for i := range rows {
			rows[i] = float32(3 + 2*rng.NormFloat64()*float64(1+i%dim))
		}
		n.Update(rows)
		all = append(all, rows...)
	}
	m := len(all) / dim
	for j := range dim {
		mean, v := 0.0, 0.0
		for r := range m {
			mean += float64(all[r*dim+j])
		}
		mean /= float64(m)
		for r := range m {
			d := float64(all[r*dim+j]) - mean
			v += d * d
		}
		v /= float64(m)
		x := []float32{float32(mean + math.Sqrt(v)), 0}
		if j == 1 {
			x = []float32{0, float32(mean + math.Sqrt(v))}
		}
		out := make([]float32, dim)
		n.Apply(out, x)
		if math.Abs(float64(out[j])-1) > 1e-4 {
			t.Errorf("dimension %d: mean + std normalises to %v, want 1", j, out[j])
		}
	}
	if n.Count() != float64(m) {
		t.Errorf("count %v, want %d", n.Count(), m)
	}
	out := make([]float32, dim)
	n.Apply(out, []float32{1e9, -1e9})
	if out[0] != n.Clip || out[1] != -n.Clip {
		t.Errorf("extreme inputs normalise to %v, want +-%v", out, n.Clip)
	}
	fresh := NewNormalizer(dim)
	fresh.Apply(out, []float32{5, -7})
	if out[0] != 5 || out[1] != -7 {
		t.Errorf("a normaliser with no data changed its input: %v", out)
	}
}
