package nn

import (
	"math"
	"math/rand/v2"

	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// NewRand returns a deterministic generator for seed; distinct streams of
// one seed are told apart by stream.
func NewRand(seed int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), stream))
}

// GlorotUniform fills m from U(-l, l), l = sqrt(6/(fanIn+fanOut)), as TF's
// glorot_uniform_initializer.
func GlorotUniform(m *tensor.Matrix, fanIn, fanOut int, rng *rand.Rand) {
	limit := math.Sqrt(6 / float64(fanIn+fanOut))
	for i := range m.Data {
		m.Data[i] = float32((2*rng.Float64() - 1) * limit)
	}
}

// TruncatedNormal fills m from N(0, std²) redrawing values beyond two
// standard deviations, as TF's truncated_normal_initializer.
func TruncatedNormal(m *tensor.Matrix, std float64, rng *rand.Rand) {
	for i := range m.Data {
		v := rng.NormFloat64()
		for math.Abs(v) > 2 {
			v = rng.NormFloat64()
		}
		m.Data[i] = float32(v * std)
	}
}
