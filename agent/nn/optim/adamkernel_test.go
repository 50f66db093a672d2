package optim

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// The update kernel writes what the Go loop writes, bit for bit, over many steps of one state:
// lengths around the vector widths, gradients from zero and subnormal to large, and the paper's
// and other hyperparameters.
func TestAdamKernelMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	grad := func() float32 {
		switch rng.IntN(8) {
		case 0:
			return 0
		case 1:
			return float32(rng.NormFloat64() * 1e-40) // subnormal
		case 2:
			return float32(rng.NormFloat64() * 1e6)
		}
		return float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(9)-6)))
	}
	for _, hp := range [][4]float32{{0.9, 0.999, 1e-3, 2e-4}, {0.5, 0.9, 0.3, 1e-8}} {
		for _, n := range []int{1, 7, 8, 15, 16, 17, 33, 1000} {
			w, m, v := make([]float32, n), make([]float32, n), make([]float32, n)
			for i := range w {
				w[i] = float32(rng.NormFloat64())
			}
			wGo, mGo, vGo := append([]float32(nil), w...), append([]float32(nil), m...), append([]float32(nil), v...)
			g := make([]float32, n)
			b1, b2, lr, eps := hp[0], hp[1], hp[2], hp[3]
			for step := range 20 {
				for i := range g {
					g[i] = grad()
				}
				lrT := lr * float32(step+1) // any step size: the kernel takes it as given
				adamUpdate(w, m, v, g, b1, b2, 1-b1, 1-b2, lrT, eps)
				adamUpdateGo(wGo, mGo, vGo, g, b1, b2, 1-b1, 1-b2, lrT, eps)
				for i := range w {
					if math.Float32bits(w[i]) != math.Float32bits(wGo[i]) || math.Float32bits(m[i]) != math.Float32bits(mGo[i]) || math.Float32bits(v[i]) != math.Float32bits(vGo[i]) {
						t.Fatalf("betas %v, %v, n %d, step %d, entry %d: kernel w %v m %v v %v, Go w %v m %v v %v",
							b1, b2, n, step, i, w[i], m[i], v[i], wGo[i], mGo[i], vGo[i])
					}
				}
			}
		}
	}
}

// BenchmarkAdamUpdate is one update of a 5^6 output layer's 65 x 15,625 weights by the kernel and
// by the Go loop, alternated; ns-per-weight for each, and their ratio.
func BenchmarkAdamUpdate(b *testing.B) {
	const n = 65 * 15625
	w, m, v, g := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range g {
		g[i] = float32(i%17) * 1e-3
	}
	var kernel, goLoop float64
	for b.Loop() {
		t0 := nowNanos()
		adamUpdate(w, m, v, g, 0.9, 0.999, 0.1, 0.001, 1e-3, 2e-4)
		t1 := nowNanos()
		adamUpdateGo(w, m, v, g, 0.9, 0.999, 0.1, 0.001, 1e-3, 2e-4)
		kernel += float64(t1 - t0)
		goLoop += float64(nowNanos() - t1)
	}
	b.ReportMetric(kernel/float64(b.N)/n, "kernel-ns-per-weight")
	b.ReportMetric(goLoop/float64(b.N)/n, "go-ns-per-weight")
	b.ReportMetric(goLoop/kernel, "speedup")
}

func nowNanos() int64 { return time.Now().UnixNano() }
