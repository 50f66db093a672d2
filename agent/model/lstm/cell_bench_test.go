package lstm

import (
	"github.com/sparsepcl/sparsepcl/agent/nn"
)

import "testing"

// BenchmarkCells times the elementwise LSTM step alone (B=400, H=128), on
// the calling goroutine and through the worker pool.
func BenchmarkCells(b *testing.B) {
	const B, H = 400, 128
	rng := nn.NewRand(1, 1)
	pre := make([]float32, B*4*H)
	for i := range pre {
		pre[i] = float32(rng.NormFloat64() * 2)
	}
	gates, c, h := make([]float32, B*4*H), make([]float32, B*H), make([]float32, B*H)
	for _, mode := range []struct {
		name string
		pool *cellPool
	}{{"serial", nil}, {"pool", newCellPool()}} {
		b.Run(mode.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				copy(gates, pre)
				mode.pool.run(cellJob{hidden: H, forget: 1, gates: gates, cPrev: c, c: c, h: h}, B)
			}
		})
	}
}
