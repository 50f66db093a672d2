package lstm_test

import (
	"fmt"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"

	"github.com/sparsepcl/sparsepcl/agent/model/lstm"
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

// trainGemms lists every matrix product Net.Forward+Backward performs
// (see net.go and layer.go), with the same shapes and transposes. With
// projected inputs the three T*B-row input products are replaced by three
// on the V+1 stacked embedding rows (V = Σ vocabularies).
func trainGemms(T, B, E, H, logits, V int, projected bool) []gemmShape {
	TB := T * B
	input := []gemmShape{
		{TB, 4 * H, E, false, false, 1}, // input projection x·Wx
		{E, 4 * H, TB, true, false, 1},  // dWx
		{TB, E, 4 * H, false, true, 1},  // dx
	}
	if projected {
		input = []gemmShape{
			{V + 1, 4 * H, E, false, false, 1}, // projected tables stack·Wx
			{E, 4 * H, V + 1, true, false, 1},  // dWx = stackᵀ·dP
			{V + 1, E, 4 * H, false, true, 1},  // d(stack) = dP·Wxᵀ
		}
	}
	return append(input, []gemmShape{
		// forward
		{B, 4 * H, H, false, false, T - 1}, // recurrent (none from h_{-1} = 0)
		{TB, logits, H, false, false, 1},   // logits head
		{TB, 1, H, false, false, 2},        // value head, c and h parts (gemv)
		// backward: heads
		{H, logits, TB, true, false, 1}, // dW logits
		{TB, H, logits, false, true, 1}, // dH from logits
		{H, 1, TB, true, false, 2},      // dW value (c, h) (gemv)
		{TB, H, 1, false, true, 2},      // dC, dH from value
		// backward: LSTM
		{B, H, 4 * H, false, true, T - 1}, // dh_{t-1}
		{H, 4 * H, TB, true, false, 1},    // dWh
	}...)
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

// run replays the products as Net runs them: one-column products (the
// value head and its weight gradient) as sgemv, the rest as sgemm.
func (g *bareGemms) run(eng *tensor.Engine) error {
	for i, s := range g.shapes {
		for r := 0; r < s.count; r++ {
			if s.n == 1 && !s.tb {
				op := blas.NoTrans
				if s.ta {
					op = blas.Trans
				}
				a := g.a[i]
				eng.BLAS().Sgemv(op, a.Rows, a.Cols, 1, a.Data, a.Cols, g.b[i].Data, 1, 1, g.c[i].Data, 1)
				continue
			}
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

// trainBench is one Net training setup at the paper's shapes.
type trainBench struct {
	n       *lstm.Net
	adam    *optim.Adam
	tokens  []int32
	lengths []int
	dHeads  []*tensor.Matrix
	T       int
}

// newTrainBench builds the setup; ragged draws each sequence length
// uniformly from 1..T instead of T (padded batches, as episodes that end
// early make them).
func newTrainBench(b *testing.B, eng *tensor.Engine, T int, ragged bool) *trainBench {
	n, err := lstm.NewNet(lstm.NetConfig{InputVocabs: benchVocabs, Hidden: benchH,
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
		if ragged {
			lengths[i] = 1 + rng.IntN(T)
		}
	}
	dl, dv := tensor.New(T*benchB, benchLogits), tensor.New(T*benchB, 1)
	for i := range dl.Data {
		dl.Data[i] = float32(rng.NormFloat64() * 1e-3)
	}
	for i := range dv.Data {
		dv.Data[i] = float32(rng.NormFloat64() * 1e-3)
	}
	return &trainBench{n: n, adam: adam, tokens: tokens, lengths: lengths, dHeads: []*tensor.Matrix{dl, dv}, T: T}
}

// step is one training step: zero grads, forward, backward, clip, Adam.
func (tb *trainBench) step(b *testing.B) time.Duration {
	t0 := time.Now()
	nn.ZeroGrads(tb.n.Params())
	if _, err := tb.n.Forward(tb.tokens, tb.T, benchB, tb.lengths); err != nil {
		b.Fatal(err)
	}
	if err := tb.n.Backward(tb.dHeads); err != nil {
		b.Fatal(err)
	}
	optim.ClipGlobalNorm(tb.n.Params(), 10)
	if err := tb.adam.Step(); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

// gemms lists the products the step actually performs on its input path.
func (tb *trainBench) gemms() []gemmShape {
	V := 0
	for _, v := range benchVocabs {
		V += v
	}
	return trainGemms(tb.T, benchB, benchH, benchH, benchLogits, V, lstm.ProjectsTrainingInput(tb.n, tb.T*benchB))
}

// BenchmarkTrainStep times forward + backward + clip + Adam of Net at the
// paper's shapes (default input path) and, in the same loop, the bare gemms
// that step performs with the same shapes. ns/op covers both; train-ms and
// bare-ms split it, and ratio = (train GFLOP/s) / (bare GFLOP/s) over the
// gemm FLOPs actually performed, so it is the gemm efficiency of the step,
// not its speed: compare train-ms across versions.
func BenchmarkTrainStep(b *testing.B) {
	for name, eng := range benchEngines(b) {
		for _, T := range []int{20, 70} {
			b.Run(fmt.Sprintf("%s/T=%d", name, T), func(b *testing.B) {
				tb := newTrainBench(b, eng, T, false)
				shapes := tb.gemms()
				bare := newBareGemms(shapes)
				flops := gemmFlops(shapes)
				var trainDur, bareDur time.Duration
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					trainDur += tb.step(b)
					t1 := time.Now()
					if err := bare.run(eng); err != nil {
						b.Fatal(err)
					}
					bareDur += time.Since(t1)
				}
				trainGF := flops * float64(b.N) / trainDur.Seconds() / 1e9
				bareGF := flops * float64(b.N) / bareDur.Seconds() / 1e9
				b.ReportMetric(trainDur.Seconds()*1e3/float64(b.N), "train-ms")
				b.ReportMetric(bareDur.Seconds()*1e3/float64(b.N), "bare-ms")
				b.ReportMetric(trainGF, "train-GFLOP/s")
				b.ReportMetric(bareGF, "bare-GFLOP/s")
				b.ReportMetric(flops/1e9, "GFLOP/step")
				b.ReportMetric(trainGF/bareGF, "ratio")
			})
		}
	}
}

// BenchmarkTrainStepInputPaths times the training step on the direct input
// path (embedding sums, T*B-row x·Wx, dWx, dx gemms, every row of the
// padded batch) and on projected tables (packed active rows only),
// alternating in one loop so both see the same machine load; speedup =
// direct-ms / projected-ms. "ragged" batches have lengths uniform in 1..T.
func BenchmarkTrainStepInputPaths(b *testing.B) {
	for name, eng := range benchEngines(b) {
		for _, c := range []struct {
			T      int
			ragged bool
		}{{20, false}, {70, false}, {70, true}} {
			b.Run(fmt.Sprintf("%s/T=%d/ragged=%v", name, c.T, c.ragged), func(b *testing.B) {
				T := c.T
				direct, proj := newTrainBench(b, eng, T, c.ragged), newTrainBench(b, eng, T, c.ragged)
				lstm.SetDirectTrainingInput(direct.n, true)
				if lstm.ProjectsTrainingInput(direct.n, T*benchB) || !lstm.ProjectsTrainingInput(proj.n, T*benchB) {
					b.Fatal("input paths not as configured")
				}
				var dDur, pDur time.Duration
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					dDur += direct.step(b)
					pDur += proj.step(b)
				}
				b.ReportMetric(dDur.Seconds()*1e3/float64(b.N), "direct-ms")
				b.ReportMetric(pDur.Seconds()*1e3/float64(b.N), "projected-ms")
				b.ReportMetric(dDur.Seconds()/pDur.Seconds(), "speedup")
			})
		}
	}
}

// BenchmarkStep is the sampling cost: one Net.Step for B = 400 sequences.
func BenchmarkStep(b *testing.B) {
	for name, eng := range benchEngines(b) {
		b.Run(name, func(b *testing.B) {
			n, err := lstm.NewNet(lstm.NetConfig{InputVocabs: benchVocabs, Hidden: benchH,
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
