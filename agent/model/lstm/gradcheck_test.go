package lstm

import (
	"fmt"
	"math"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/nn/nntest"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Finite-difference checks of the recurrent network's gradients, element by element
// (nntest.Problem), on every path: the Go and C cells, the worker pool, the direct and the
// projected input.

func embeddingProblem(t *testing.T) nntest.Problem {
	rng := nn.NewRand(4, 0)
	e, err := newEmbeddingSum("emb", []int{3, 4, 2}, 5, 0.5, rng)
	if err != nil {
		t.Fatal(err)
	}
	const rows = 7
	tokens := make([]int32, rows*3)
	for i := range tokens {
		tokens[i] = int32(rng.IntN(e.Vocabs[i%3]))
	}
	r := nntest.RandFill(tensor.New(rows, 5), rng, 1)
	return nntest.Problem{
		Params: e.Params(),
		Loss: func() (float64, error) {
			y, err := e.Forward(tokens, rows)
			if err != nil {
				return 0, err
			}
			return nntest.WeightedSum(y, r), nil
		},
		Backward: func() error { return e.Backward(r) },
	}
}

// problemOption selects how the LSTM cells and the Net input run in a
// gradient check.
type problemOption int

const (
	pureGoCells     problemOption = iota + 1 // Go cell functions instead of the C kernels
	pooledCells                              // rows split over the worker pool (large B)
	projectedInputs                          // Net: input through projected tables
	directInputs                             // Net: embedding sums, then x·Wx
)

func lstmProblem(t *testing.T, opts ...problemOption) nntest.Problem {
	eng := tensor.GonumEngine()
	rng := nn.NewRand(5, 0)
	const In, H = 4, 6
	T, B := 5, 3
	lengths := []int{5, 2, 3}
	pooled := false
	for _, o := range opts {
		pooled = pooled || o == pooledCells
	}
	if pooled {
		// B*H above parallelMinCells so the pool splits the rows.
		T, B = 3, parallelMinCells/H+7
		lengths = make([]int, B)
		for b := range lengths {
			lengths[b] = 1 + b%T
		}
	}
	l, err := newLayer(eng, "lstm", In, H, rng)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range opts {
		if o == pureGoCells {
			l.pureGo = true
		}
	}
	nntest.RandFill(l.B.Value, rng, 0.3)
	x := nntest.InputParam("x", nntest.RandFill(tensor.New(T*B, In), rng, 1))
	rh := nntest.RandFill(tensor.New(T*B, H), rng, 1)
	rc := nntest.RandFill(tensor.New(T*B, H), rng, 1)
	return nntest.Problem{
		Params: append(l.Params(), x),
		Loss: func() (float64, error) {
			h, c, err := l.Forward(x.Value, T, B, lengths)
			if err != nil {
				return 0, err
			}
			return nntest.WeightedSum(h, rh) + nntest.WeightedSum(c, rc), nil
		},
		Backward: func() error {
			dx, err := l.Backward(rh, rc)
			if err != nil {
				return err
			}
			return x.Grad.CopyFrom(dx)
		},
	}
}

// seqNetProblem is the whole embeddingSum+LSTM+heads network over a masked
// batch; R is nonzero on inactive rows too, which must not leak into gradients.
func seqNetProblem(t *testing.T, eng *tensor.Engine, opts ...problemOption) nntest.Problem {
	n, err := NewNet(NetConfig{
		InputVocabs: []int{4, 3, 3}, Hidden: 5, EmbedDim: 4, HeadSizes: []int{6, 1, 1},
		StateHeads: []bool{false, true, false}, Seed: 11, EmbedStd: 0.5, Engine: eng,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range opts {
		switch o {
		case pureGoCells:
			n.setPureGo(true)
		case projectedInputs:
			n.trainInput = projectedInput
		case directInputs:
			n.trainInput = directInput
		}
	}
	rng := nn.NewRand(8, 0)
	// Larger-than-default state-head weights so its gradient paths matter.
	nntest.RandFill(n.heads[1].w.Value, rng, 0.5)
	const T, B = 4, 3
	lengths := []int{2, 4, 1}
	tokens := make([]int32, T*B*3)
	for i := range tokens {
		tokens[i] = int32(rng.IntN(n.cfg.InputVocabs[i%3]))
	}
	// Heads: logits, a value head on [c, h] and a one-column head on h
	// (the matrix-vector paths of headMul).
	rs := []*tensor.Matrix{nntest.RandFill(tensor.New(T*B, 6), rng, 1), nntest.RandFill(tensor.New(T*B, 1), rng, 1), nntest.RandFill(tensor.New(T*B, 1), rng, 1)}
	return nntest.Problem{
		Params: n.Params(),
		Loss: func() (float64, error) {
			outs, err := n.Forward(tokens, T, B, lengths)
			if err != nil {
				return 0, err
			}
			if want := n.trainInput != directInput; n.projected != want {
				return 0, fmt.Errorf("forward used projected input %v, want %v", n.projected, want)
			}
			return nntest.WeightedSum(outs[0], rs[0]) + nntest.WeightedSum(outs[1], rs[1]) + nntest.WeightedSum(outs[2], rs[2]), nil
		},
		Backward: func() error { return n.Backward(rs) },
	}
}

func TestGradCheck(t *testing.T) {
	cases := []struct {
		name string
		make func(t *testing.T) nntest.Problem
	}{
		{"embedding-sum", embeddingProblem},
		{"lstm-masked", func(t *testing.T) nntest.Problem { return lstmProblem(t) }},
		{"seqnet-gonum", func(t *testing.T) nntest.Problem { return seqNetProblem(t, tensor.GonumEngine(), directInputs) }},
		{"seqnet-default-engine", func(t *testing.T) nntest.Problem { return seqNetProblem(t, defaultEngine(t), directInputs) }},
		{"seqnet-pure-go-cells", func(t *testing.T) nntest.Problem {
			return seqNetProblem(t, tensor.GonumEngine(), directInputs, pureGoCells)
		}},
		{"seqnet-projected-gonum", func(t *testing.T) nntest.Problem { return seqNetProblem(t, tensor.GonumEngine(), projectedInputs) }},
		{"seqnet-projected-default-engine", func(t *testing.T) nntest.Problem {
			return seqNetProblem(t, defaultEngine(t), projectedInputs)
		}},
		{"seqnet-projected-pure-go", func(t *testing.T) nntest.Problem {
			return seqNetProblem(t, tensor.GonumEngine(), projectedInputs, pureGoCells)
		}},
		{"lstm-pure-go-cells", func(t *testing.T) nntest.Problem { return lstmProblem(t, pureGoCells) }},
		{"lstm-pooled", func(t *testing.T) nntest.Problem { return lstmProblem(t, pooledCells) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { nntest.CheckGradients(t, tc.make(t)) })
	}
}

func defaultEngine(t testing.TB) *tensor.Engine {
	e, err := tensor.NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestGradCheckCatchesPerturbedGradient proves the check has teeth: small
// deliberate errors in a correct analytic gradient must be reported.
func TestGradCheckCatchesPerturbedGradient(t *testing.T) {
	for _, path := range []struct {
		name string
		opt  problemOption
	}{{"direct", directInputs}, {"projected", projectedInputs}} {
		t.Run(path.name, func(t *testing.T) { checkCatchesPerturbedGradient(t, seqNetProblem(t, tensor.GonumEngine(), path.opt)) })
	}
}

func checkCatchesPerturbedGradient(t *testing.T, p nntest.Problem) {
	ana, err := nntest.AnalyticGrads(p)
	if err != nil {
		t.Fatal(err)
	}
	if fails, err := nntest.CompareGrads(p, ana, 7, nntest.MaxElems); err != nil || len(fails) > 0 {
		t.Fatalf("unperturbed gradient should pass: %v %v", err, fails)
	}
	names := map[string]int{}
	for i, q := range p.Params {
		names[q.Name] = i
	}
	perturbations := []struct {
		name  string
		apply func(g []*tensor.Matrix)
	}{
		{"one element of lstm.Wh +5%", func(g []*tensor.Matrix) { largest(g[names["lstm.Wh"]], 1.05) }},
		{"one element of head0.W sign flipped", func(g []*tensor.Matrix) { largest(g[names["head0.W"]], -1) }},
		{"lstm.Wx scaled 1.05", func(g []*tensor.Matrix) { scaleAll(g[names["lstm.Wx"]], 1.05) }},
		{"head1.b doubled", func(g []*tensor.Matrix) { scaleAll(g[names["head1.b"]], 2) }},
		{"embed.bias halved", func(g []*tensor.Matrix) { scaleAll(g[names["embed.bias"]], 0.5) }},
	}
	for _, pt := range perturbations {
		t.Run(pt.name, func(t *testing.T) {
			g := make([]*tensor.Matrix, len(ana))
			for i := range ana {
				g[i] = ana[i].Clone()
			}
			pt.apply(g)
			// Check every element so the perturbed one is surely visited.
			fails, err := compareGradsAll(p, g)
			if err != nil {
				t.Fatal(err)
			}
			if len(fails) == 0 {
				t.Fatal("perturbed gradient passed the check")
			}
		})
	}
}

func compareGradsAll(p nntest.Problem, g []*tensor.Matrix) ([]string, error) {
	return nntest.CompareGrads(p, g, 7, math.MaxInt)
}

func largest(m *tensor.Matrix, factor float32) {
	k := 0
	for i, v := range m.Data {
		if math.Abs(float64(v)) > math.Abs(float64(m.Data[k])) {
			k = i
		}
	}
	m.Data[k] *= factor
}

func scaleAll(m *tensor.Matrix, f float32) {
	for i := range m.Data {
		m.Data[i] *= f
	}
}
