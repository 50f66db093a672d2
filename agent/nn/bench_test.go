package nn_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/nn/optim"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Paper shapes: batch 400, LSTM 128, 160 logits plus a value head on [c, h].
const (
	benchB      = 400
	benchH      = 128
	benchLogits = 160
)

var benchVocabs = []int{6, 3, 3, 6}

// gemmShape is one product of a training step: op(A) is m x k, op(B) k x n.
type gemmShape struct {
	m, n, k int
	ta, tb  bool
	count   int
}

// trainGemms lists every matrix product SeqNet.Forward+Backward performs
// (see seqnet.go and lstm.go), with the same shapes and transposes.
func trainGemms(T, B, E, H, logits int) []gemmShape {
	TB := T * B
	return []gemmShape{
		// forward
		{TB, 4 * H, E, false, false, 1},  // input projection
		{B, 4 * H, H, false, false, T},   // recurrent
		{TB, logits, H, false, false, 1}, // logits head
		{TB, 1, H, false, false, 2},      // value head, c and h parts
		// backward: heads
		{H, logits, TB, true, false, 1}, // dW logits
		{TB, H, logits, false, true, 1}, // dH from logits
		{H, 1, TB, true, false, 2},      // dW value (c, h)
		{TB, H, 1, false, true, 2},      // dC, dH from value
		// backward: LSTM
		{B, H, 4 * H, false, true, T - 1}, // dh_{t-1}
		{H, 4 * H, TB, true, false, 1},    // dWh
		{E, 4 * H, TB, true, false, 1},    // dWx
		{TB, E, 4 * H, false, true, 1},    // dx
	}
}

func gemmFlops(shapes []gemmShape) float64 {
	var f float64
	for _, s := range shapes {
		f += 2 * float64(s.m) * float64(s.n) * float64(s.k) * float64(s.count)
	}
	return f
}

// bareGemms holds preallocated operands to replay the same products alone.
type bareGemms struct {
	shapes  []gemmShape
	a, b, c []*tensor.Matrix
}

func newBareGemms(shapes []gemmShape) *bareGemms {
	g := &bareGemms{shapes: shapes}
	for _, s := range shapes {
		ar, ac := s.m, s.k
		if s.ta {
			ar, ac = ac, ar
		}
		br, bc := s.k, s.n
		if s.tb {
			br, bc = bc, br
		}
		a, b := tensor.New(ar, ac), tensor.New(br, bc)
		for i := range a.Data {
			a.Data[i] = float32(i%7) * 0.01
		}
		for i := range b.Data {
			b.Data[i] = float32(i%5) * 0.01
		}
		g.a, g.b, g.c = append(g.a, a), append(g.b, b), append(g.c, tensor.New(s.m, s.n))
	}
	return g
}

func (g *bareGemms) run(eng *tensor.Engine) error {
	for i, s := range g.shapes {
		for r := 0; r < s.count; r++ {
			if err := eng.MatMul(g.c[i], g.a[i], s.ta, g.b[i], s.tb, 1, 1); err != nil {
				return err
			}
		}
	}
	return nil
}

func benchEngines(b *testing.B) map[string]*tensor.Engine {
	es := map[string]*tensor.Engine{"gonum": tensor.GonumEngine()}
	if e, err := tensor.OpenBLASEngine(); err == nil {
		es["openblas"] = e
	} else {
		b.Logf("openblas unavailable: %v", err)
	}
	return es
}

// BenchmarkTrainStep times forward + backward + clip + Adam of SeqNet at the
// paper's shapes and, in the same loop, the bare gemms of that step with the
// same shapes. ns/op covers both; train-ms and bare-ms split it, and
// ratio = (train GFLOP/s) / (bare GFLOP/s), gemm FLOPs only.
func BenchmarkTrainStep(b *testing.B) {
	for name, eng := range benchEngines(b) {
		for _, T := range []int{20, 70} {
			b.Run(fmt.Sprintf("%s/T=%d", name, T), func(b *testing.B) {
				n, err := nn.NewSeqNet(nn.SeqNetConfig{InputVocabs: benchVocabs, Hidden: benchH,
					HeadSizes: []int{benchLogits, 1}, StateHeads: []bool{false, true}, Seed: 1, Engine: eng})
				if err != nil {
					b.Fatal(err)
				}
				adam, err := optim.NewAdam(n.Params(), optim.DefaultAdamConfig(1e-4))
				if err != nil {
					b.Fatal(err)
				}
				rng := nn.NewRand(2, 0)
				tokens := make([]int32, T*benchB*len(benchVocabs))
				for i := range tokens {
					tokens[i] = int32(rng.IntN(benchVocabs[i%len(benchVocabs)]))
				}
				lengths := make([]int, benchB)
				for i := range lengths {
					lengths[i] = T
				}
				dl, dv := tensor.New(T*benchB, benchLogits), tensor.New(T*benchB, 1)
				for i := range dl.Data {
					dl.Data[i] = float32(rng.NormFloat64() * 1e-3)
				}
				for i := range dv.Data {
					dv.Data[i] = float32(rng.NormFloat64() * 1e-3)
				}
				shapes := trainGemms(T, benchB, benchH, benchH, benchLogits)
				bare := newBareGemms(shapes)
				flops := gemmFlops(shapes)
				var trainDur, bareDur time.Duration
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					t0 := time.Now()
					nn.ZeroGrads(n.Params())
					if _, err := n.Forward(tokens, T, benchB, lengths); err != nil {
						b.Fatal(err)
					}
					if err := n.Backward([]*tensor.Matrix{dl, dv}); err != nil {
						b.Fatal(err)
					}
					optim.ClipGlobalNorm(n.Params(), 10)
					if err := adam.Step(); err != nil {
						b.Fatal(err)
					}
					t1 := time.Now()
					if err := bare.run(eng); err != nil {
						b.Fatal(err)
					}
					trainDur += t1.Sub(t0)
					bareDur += time.Since(t1)
				}
				trainGF := flops * float64(b.N) / trainDur.Seconds() / 1e9
				bareGF := flops * float64(b.N) / bareDur.Seconds() / 1e9
				b.ReportMetric(trainDur.Seconds()*1e3/float64(b.N), "train-ms")
				b.ReportMetric(bareDur.Seconds()*1e3/float64(b.N), "bare-ms")
				b.ReportMetric(trainGF, "train-GFLOP/s")
				b.ReportMetric(bareGF, "bare-GFLOP/s")
				b.ReportMetric(trainGF/bareGF, "ratio")
			})
		}
	}
}

// BenchmarkStep is the sampling cost: one SeqNet.Step for B = 400 sequences.
func BenchmarkStep(b *testing.B) {
	for name, eng := range benchEngines(b) {
		b.Run(name, func(b *testing.B) {
			n, err := nn.NewSeqNet(nn.SeqNetConfig{InputVocabs: benchVocabs, Hidden: benchH,
				HeadSizes: []int{benchLogits, 1}, StateHeads: []bool{false, true}, Seed: 1, Engine: eng})
			if err != nil {
				b.Fatal(err)
			}
			st := n.NewState(benchB)
			tokens := make([]int32, benchB*len(benchVocabs))
			heads := []*tensor.Matrix{tensor.New(benchB, benchLogits), tensor.New(benchB, 1)}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := n.Step(st, tokens, heads); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
