package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Finite-difference gradient checks in float32.
//
// The loss is L = Σ R⊙out with fixed random R (accumulated in float64), so
// dL/dout = R is what Backward receives. Numeric gradients are central
// differences (L(θ+ε) - L(θ-ε)) / 2ε with ε = 3e-3:
//   - truncation error is ε²/6·|L”'|, about 1e-6 relative here;
//   - float32 rounding of the forward pass perturbs L by ~1e-7·Σ|R⊙out|,
//     i.e. ~1e-7·10 / 6e-3 ≈ 2e-4 absolute on a numeric gradient at most.
//
// Hence the per-element test |num-ana| <= 1e-3 + 1e-2·|ana|, plus a
// per-parameter aggregate ‖num-ana‖ / ‖ana‖ <= 1e-2. A factor-of-two or
// sign error fails both by two orders of magnitude, and TestGradCheck
// CatchesPerturbedGradient shows that the check rejects a gradient with one
// element off by 5% or one parameter scaled by 1.05.
const (
	fdEps      = 3e-3
	fdAbsTol   = 1e-3
	fdRelTol   = 1e-2
	fdAggTol   = 1e-2
	fdMaxElems = 40 // per parameter, chosen at random when larger
)

type gradProblem struct {
	params   []*Param // includes pseudo-params for inputs (Grad = dL/dinput)
	loss     func() (float64, error)
	backward func() error // fills the Grad of every entry of params
}

// weightedSum returns Σ R⊙m in float64.
func weightedSum(m, r *tensor.Matrix) float64 {
	var s float64
	for i, v := range m.Data {
		s += float64(v) * float64(r.Data[i])
	}
	return s
}

func randFill(m *tensor.Matrix, rng *rand.Rand, scale float64) *tensor.Matrix {
	for i := range m.Data {
		m.Data[i] = float32(rng.NormFloat64() * scale)
	}
	return m
}

// analyticGrads runs loss+backward and returns copies of every gradient.
func analyticGrads(p gradProblem) ([]*tensor.Matrix, error) {
	for _, q := range p.params {
		q.Grad.Zero()
	}
	if _, err := p.loss(); err != nil {
		return nil, err
	}
	if err := p.backward(); err != nil {
		return nil, err
	}
	var gs []*tensor.Matrix
	for _, q := range p.params {
		gs = append(gs, q.Grad.Clone())
	}
	return gs, nil
}

// compareGrads checks analytic gradients ana (one per param) against
// central differences and returns a description of every failure.
func compareGrads(p gradProblem, ana []*tensor.Matrix, seed uint64, maxElems int) ([]string, error) {
	rng := rand.New(rand.NewPCG(seed, 99))
	var fails []string
	for pi, q := range p.params {
		n := len(q.Value.Data)
		idx := rng.Perm(n)
		if n > maxElems {
			idx = idx[:maxElems]
		}
		var diff2, ana2 float64
		for _, k := range idx {
			orig := q.Value.Data[k]
			q.Value.Data[k] = orig + fdEps
			lp, err := p.loss()
			if err != nil {
				return nil, err
			}
			q.Value.Data[k] = orig - fdEps
			lm, err := p.loss()
			if err != nil {
				return nil, err
			}
			q.Value.Data[k] = orig
			// The perturbation actually applied is the float32 difference.
			h := float64(orig+fdEps) - float64(orig-fdEps)
			num := (lp - lm) / h
			a := float64(ana[pi].Data[k])
			diff2 += (num - a) * (num - a)
			ana2 += a * a
			if math.Abs(num-a) > fdAbsTol+fdRelTol*math.Abs(a) {
				fails = append(fails, fmt.Sprintf("%s[%d]: numeric %.6g analytic %.6g", q.Name, k, num, a))
			}
		}
		if ana2 > 0 && math.Sqrt(diff2/ana2) > fdAggTol {
			fails = append(fails, fmt.Sprintf("%s: aggregate relative error %.3g", q.Name, math.Sqrt(diff2/ana2)))
		}
		if ana2 == 0 && diff2 > fdAbsTol*fdAbsTol {
			fails = append(fails, fmt.Sprintf("%s: analytic gradient is zero but numeric is not", q.Name))
		}
	}
	return fails, nil
}

func runGradCheck(t *testing.T, p gradProblem) {
	t.Helper()
	ana, err := analyticGrads(p)
	if err != nil {
		t.Fatal(err)
	}
	nonzero := false
	for _, g := range ana {
		nonzero = nonzero || g.SumSquares() > 0
	}
	if !nonzero {
		t.Fatal("all analytic gradients are zero: the check would be vacuous")
	}
	fails, err := compareGrads(p, ana, 7, fdMaxElems)
	if err != nil {
		t.Fatal(err)
	}
	if len(fails) > 0 {
		t.Fatalf("%d gradient mismatches:\n%s", len(fails), strings.Join(fails[:min(len(fails), 20)], "\n"))
	}
}

// inputParam wraps an input matrix as a pseudo-parameter so its gradient is checked too.
func inputParam(name string, x *tensor.Matrix) *Param {
	return &Param{Name: name, Value: x, Grad: tensor.New(x.Rows, x.Cols)}
}

func linearProblem(t *testing.T, bias bool) gradProblem {
	eng := tensor.GonumEngine()
	rng := NewRand(3, 0)
	l, err := NewLinear(eng, "lin", 5, 4, bias, rng)
	if err != nil {
		t.Fatal(err)
	}
	if bias {
		randFill(l.B.Value, rng, 0.5)
	}
	x := inputParam("x", randFill(tensor.New(6, 5), rng, 1))
	r := randFill(tensor.New(6, 4), rng, 1)
	return gradProblem{
		params: append(l.Params(), x),
		loss: func() (float64, error) {
			y, err := l.Forward(x.Value)
			if err != nil {
				return 0, err
			}
			return weightedSum(y, r), nil
		},
		backward: func() error { return l.Backward(r, x.Grad, true) },
	}
}

// rowScaledProblem is linearProblem with the loss's weights R given as a row-scaled gradient
// diag(s)·E, passed through BackwardRowScaled.
func rowScaledProblem(t *testing.T, bias bool) gradProblem {
	eng := tensor.GonumEngine()
	rng := NewRand(3, 1)
	l, err := NewLinear(eng, "lin", 5, 4, bias, rng)
	if err != nil {
		t.Fatal(err)
	}
	if bias {
		randFill(l.B.Value, rng, 0.5)
	}
	x := inputParam("x", randFill(tensor.New(6, 5), rng, 1))
	e := randFill(tensor.New(6, 4), rng, 1)
	var s RowScaled
	s.Reset(6)
	r := tensor.New(6, 4)
	for i := range 6 {
		s.Scale[i] = float32(rng.NormFloat64())
		for j := range 4 {
			r.Data[i*4+j] = s.Scale[i] * e.Data[i*4+j]
		}
	}
	return gradProblem{
		params: append(l.Params(), x),
		loss: func() (float64, error) {
			y, err := l.Forward(x.Value)
			if err != nil {
				return 0, err
			}
			return weightedSum(y, r), nil
		},
		backward: func() error { return l.BackwardRowScaled(e, &s, x.Grad, true) },
	}
}

func embeddingProblem(t *testing.T) gradProblem {
	rng := NewRand(4, 0)
	e, err := NewEmbeddingSum("emb", []int{3, 4, 2}, 5, 0.5, rng)
	if err != nil {
		t.Fatal(err)
	}
	const rows = 7
	tokens := make([]int32, rows*3)
	for i := range tokens {
		tokens[i] = int32(rng.IntN(e.Vocabs[i%3]))
	}
	r := randFill(tensor.New(rows, 5), rng, 1)
	return gradProblem{
		params: e.Params(),
		loss: func() (float64, error) {
			y, err := e.Forward(tokens, rows)
			if err != nil {
				return 0, err
			}
			return weightedSum(y, r), nil
		},
		backward: func() error { return e.Backward(r) },
	}
}

// problemOption selects how the LSTM cells and the SeqNet input run in a
// gradient check.
type problemOption int

const (
	pureGoCells     problemOption = iota + 1 // Go cell functions instead of the C kernels
	pooledCells                              // rows split over the worker pool (large B)
	projectedInputs                          // SeqNet: input through projected tables
	directInputs                             // SeqNet: embedding sums, then x·Wx
)

func lstmProblem(t *testing.T, opts ...problemOption) gradProblem {
	eng := tensor.GonumEngine()
	rng := NewRand(5, 0)
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
	l, err := NewLSTM(eng, "lstm", In, H, rng)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range opts {
		if o == pureGoCells {
			l.pureGo = true
		}
	}
	randFill(l.B.Value, rng, 0.3)
	x := inputParam("x", randFill(tensor.New(T*B, In), rng, 1))
	rh := randFill(tensor.New(T*B, H), rng, 1)
	rc := randFill(tensor.New(T*B, H), rng, 1)
	return gradProblem{
		params: append(l.Params(), x),
		loss: func() (float64, error) {
			h, c, err := l.Forward(x.Value, T, B, lengths)
			if err != nil {
				return 0, err
			}
			return weightedSum(h, rh) + weightedSum(c, rc), nil
		},
		backward: func() error {
			dx, err := l.Backward(rh, rc)
			if err != nil {
				return err
			}
			return x.Grad.CopyFrom(dx)
		},
	}
}

func mlpProblem(t *testing.T, bias bool) gradProblem {
	eng := tensor.GonumEngine()
	rng := NewRand(6, 0)
	m, err := NewMLP(eng, "mlp", []int{4, 7, 5, 3}, bias, rng)
	if err != nil {
		t.Fatal(err)
	}
	x := inputParam("x", randFill(tensor.New(6, 4), rng, 1))
	r := randFill(tensor.New(6, 3), rng, 1)
	return gradProblem{
		params: append(m.Params(), x),
		loss: func() (float64, error) {
			y, err := m.Forward(x.Value)
			if err != nil {
				return 0, err
			}
			return weightedSum(y, r), nil
		},
		backward: func() error {
			dx, err := m.Backward(r)
			if err != nil {
				return err
			}
			return x.Grad.CopyFrom(dx)
		},
	}
}

// seqNetProblem is the whole EmbeddingSum+LSTM+heads network over a masked
// batch; R is nonzero on inactive rows too, which must not leak into gradients.
func seqNetProblem(t *testing.T, eng *tensor.Engine, opts ...problemOption) gradProblem {
	n, err := NewSeqNet(SeqNetConfig{
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
	rng := NewRand(8, 0)
	// Larger-than-default state-head weights so its gradient paths matter.
	randFill(n.heads[1].w.Value, rng, 0.5)
	const T, B = 4, 3
	lengths := []int{2, 4, 1}
	tokens := make([]int32, T*B*3)
	for i := range tokens {
		tokens[i] = int32(rng.IntN(n.cfg.InputVocabs[i%3]))
	}
	// Heads: logits, a value head on [c, h] and a one-column head on h
	// (the matrix-vector paths of headMul).
	rs := []*tensor.Matrix{randFill(tensor.New(T*B, 6), rng, 1), randFill(tensor.New(T*B, 1), rng, 1), randFill(tensor.New(T*B, 1), rng, 1)}
	return gradProblem{
		params: n.Params(),
		loss: func() (float64, error) {
			outs, err := n.Forward(tokens, T, B, lengths)
			if err != nil {
				return 0, err
			}
			if want := n.trainInput != directInput; n.projected != want {
				return 0, fmt.Errorf("forward used projected input %v, want %v", n.projected, want)
			}
			return weightedSum(outs[0], rs[0]) + weightedSum(outs[1], rs[1]) + weightedSum(outs[2], rs[2]), nil
		},
		backward: func() error { return n.Backward(rs) },
	}
}

func TestGradCheck(t *testing.T) {
	cases := []struct {
		name string
		make func(t *testing.T) gradProblem
	}{
		{"linear-bias", func(t *testing.T) gradProblem { return linearProblem(t, true) }},
		{"linear-nobias", func(t *testing.T) gradProblem { return linearProblem(t, false) }},
		{"linear-row-scaled-bias", func(t *testing.T) gradProblem { return rowScaledProblem(t, true) }},
		{"linear-row-scaled-nobias", func(t *testing.T) gradProblem { return rowScaledProblem(t, false) }},
		{"embedding-sum", embeddingProblem},
		{"lstm-masked", func(t *testing.T) gradProblem { return lstmProblem(t) }},
		{"mlp-tanh-bias", func(t *testing.T) gradProblem { return mlpProblem(t, true) }},
		{"mlp-tanh-nobias", func(t *testing.T) gradProblem { return mlpProblem(t, false) }},
		{"seqnet-gonum", func(t *testing.T) gradProblem { return seqNetProblem(t, tensor.GonumEngine(), directInputs) }},
		{"seqnet-default-engine", func(t *testing.T) gradProblem { return seqNetProblem(t, defaultEngine(t), directInputs) }},
		{"seqnet-pure-go-cells", func(t *testing.T) gradProblem {
			return seqNetProblem(t, tensor.GonumEngine(), directInputs, pureGoCells)
		}},
		{"seqnet-projected-gonum", func(t *testing.T) gradProblem { return seqNetProblem(t, tensor.GonumEngine(), projectedInputs) }},
		{"seqnet-projected-default-engine", func(t *testing.T) gradProblem {
			return seqNetProblem(t, defaultEngine(t), projectedInputs)
		}},
		{"seqnet-projected-pure-go", func(t *testing.T) gradProblem {
			return seqNetProblem(t, tensor.GonumEngine(), projectedInputs, pureGoCells)
		}},
		{"lstm-pure-go-cells", func(t *testing.T) gradProblem { return lstmProblem(t, pureGoCells) }},
		{"lstm-pooled", func(t *testing.T) gradProblem { return lstmProblem(t, pooledCells) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runGradCheck(t, tc.make(t)) })
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

func checkCatchesPerturbedGradient(t *testing.T, p gradProblem) {
	ana, err := analyticGrads(p)
	if err != nil {
		t.Fatal(err)
	}
	if fails, err := compareGrads(p, ana, 7, fdMaxElems); err != nil || len(fails) > 0 {
		t.Fatalf("unperturbed gradient should pass: %v %v", err, fails)
	}
	names := map[string]int{}
	for i, q := range p.params {
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

func compareGradsAll(p gradProblem, g []*tensor.Matrix) ([]string, error) {
	return compareGrads(p, g, 7, math.MaxInt)
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
