package policy

import (
	"math"
	"testing"
)

// Inverting softmax(z/temp) over a fine grid of uniforms gives each action its softmax mass, for a
// sharp and a flat temperature; a non-finite row gives -1.
func TestSampleSoftmaxWithUniform(t *testing.T) {
	z := []float32{3, 0, -1, 2.5, -math.MaxFloat32}
	for _, temp := range []float64{0.5, 1, 4} {
		want := make([]float64, len(z))
		sum := 0.0
		for i, v := range z {
			want[i] = math.Exp(float64(v) / temp)
			sum += want[i]
		}
		const n = 100000
		counts := make([]float64, len(z))
		dst := make([]float32, len(z))
		for k := range n {
			a := SampleSoftmaxWithUniform(dst, z, temp, (float64(k)+0.5)/n)
			if a < 0 {
				t.Fatalf("temp %v: no action at u %v", temp, (float64(k)+0.5)/n)
			}
			counts[a]++
		}
		for i := range z {
			if got := counts[i] / n; math.Abs(got-want[i]/sum) > 1e-4 {
				t.Errorf("temp %v: action %d drawn %.5f of the time, softmax(z/temp) gives %.5f", temp, i, got, want[i]/sum)
			}
		}
	}
	if a := SampleSoftmaxWithUniform(make([]float32, 2), []float32{float32(math.NaN()), 1}, 1, 0.5); a != -1 {
		t.Errorf("NaN logit row: action %d, want -1", a)
	}
}
