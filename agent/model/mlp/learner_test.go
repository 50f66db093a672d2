package mlp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/nn/nntest"
	"github.com/sparsepcl/sparsepcl/agent/policy/policytest"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

const (
	testDim     = 3
	testActions = 6
)

func testConfig(algo config.Algo, form config.Form, seed int64) config.Config {
	c := config.Default()
	c.Net, c.Algo, c.Form, c.MLPHidden, c.Rollout, c.Gamma = config.NetMLP, algo, form, 8, 3, 0.9
	c.Alpha, c.TsallisQ, c.Seed = 0.3, 1.5, seed
	return c
}

var algoForms = []struct {
	algo config.Algo
	form config.Form
}{
	{config.AlgoSoft, config.FormSeparate}, {config.AlgoSoft, config.FormUnified},
	{config.AlgoSparse, config.FormSeparate}, {config.AlgoSparse, config.FormUnified},
	{config.AlgoTsallis, config.FormSeparate}, {config.AlgoTsallis, config.FormUnified},
}

// segmentKinds are the ways a segment can end: cut by the iteration, truncated, terminated.
var segmentKinds = []struct {
	name                  string
	terminated, truncated bool
}{{"cut", false, false}, {"truncated", false, true}, {"terminated", true, false}}

// randomSegments returns n segments of lengths 1..6 cycling through the three kinds of end.
func randomSegments(rng *rand.Rand, n int) []*Segment {
	segs := make([]*Segment, n)
	for i := range segs {
		k := segmentKinds[i%len(segmentKinds)]
		L := 1 + rng.IntN(6)
		s := &Segment{Terminated: k.terminated, Truncated: k.truncated}
		for t := 0; t <= L; t++ {
			for range testDim {
				s.Obs = append(s.Obs, float32(rng.NormFloat64()))
			}
			if t < L {
				s.Actions = append(s.Actions, int32(rng.IntN(testActions)))
				s.Rewards = append(s.Rewards, rng.NormFloat64())
			}
		}
		segs[i] = s
	}
	return segs
}

// sharpen scales the policy's output layer so that sparse policies have non-trivial supports.
func sharpen(l *Learner, by float32) {
	for _, p := range l.Params() {
		if p.Name == "policy.head0.W" {
			for k := range p.Value.Data {
				p.Value.Data[k] *= by
			}
		}
	}
}

// slowLoss recomputes the batch loss from the definitions, one segment at a time: the heads of
// each segment from a forward pass over that segment alone, V and the per-step terms of soft and
// sparse PCL from the paper's formulas in float64, and every consistency row enumerated
// directly. A segment bootstraps from V at its last state unless it terminated.
func slowLoss(t *testing.T, l *Learner, segs []*Segment) float64 {
	t.Helper()
	cfg, m := l.Config(), l.Model
	K, d, gamma, alpha := m.NumActions(), cfg.Rollout, cfg.Gamma, cfg.Alpha
	total := 0.0
	for _, s := range segs {
		L := s.Len()
		x := tensor.New(L+1, testDim)
		copy(x.Data, s.Obs)
		heads, err := m.Forward(x)
		if err != nil {
			t.Fatal(err)
		}
		V := make([]float64, L+1)
		term := make([]float64, L)
		for r := 0; r <= L; r++ {
			z := make([]float64, K)
			for i := range z {
				z[i] = float64(heads[0].Row(r)[i])
				if cfg.Form == config.FormUnified {
					z[i] /= alpha
				}
			}
			var p []float64
			var g, v float64
			switch cfg.Algo {
			case config.AlgoSoft:
				var lse float64
				p, lse = policytest.Softmax(z)
				v = alpha * lse
			case config.AlgoSparse:
				p, g = policytest.Sparsemax(z)
				v = alpha * policytest.Spmax(z)
			default:
				t.Fatalf("slowLoss covers soft and sparse, not %s", cfg.Algo)
			}
			if cfg.Form == config.FormSeparate {
				v = float64(heads[m.VHead].Data[r])
			}
			V[r] = v
			if r == L {
				break
			}
			a := int(s.Actions[r])
			if cfg.Algo == config.AlgoSoft {
				term[r] = -alpha * math.Log(p[a])
			} else {
				lam := math.Max(g-z[a], 0) * math.Exp(float64(heads[m.LambdaHead].Data[r]))
				bigLam := -alpha / 2 / (1 + math.Exp(-float64(heads[m.BigHead].Data[r])))
				term[r] = alpha/2 - alpha*p[a] + lam - bigLam
			}
		}
		row := func(from, k int, w float64) {
			c := -V[from]
			if from+k < L || !s.Terminated {
				c += math.Pow(gamma, float64(k)) * V[from+k]
			}
			for i := range k {
				c += math.Pow(gamma, float64(i)) * (s.Rewards[from+i] + term[from+i])
			}
			c *= w
			total += c * c / 2
		}
		for k := 1; k < d; k++ {
			row(0, min(k, L), math.Pow(gamma, float64(d-k)))
		}
		for from := range L {
			row(from, min(d, L-from), 1)
		}
	}
	return total / float64(len(segs))
}

// At every kind of segment end, in a padded batch of mixed lengths, the learner's loss equals the
// slow recomputation; and the end kind matters (a terminated segment read as cut changes it).
func TestLossMatchesSlowRecomputationAtEveryBoundary(t *testing.T) {
	for i, af := range algoForms[:4] {
		cfg := testConfig(af.algo, af.form, int64(10+i))
		l, err := NewLearner(cfg, testDim, testActions, tensor.GonumEngine())
		if err != nil {
			t.Fatal(err)
		}
		sharpen(l, 6)
		segs := randomSegments(rand.New(rand.NewPCG(uint64(i), 7)), 9)
		info, err := l.Loss(segs, false)
		if err != nil {
			t.Fatal(err)
		}
		want := slowLoss(t, l, segs)
		if math.Abs(info.Loss-want) > 1e-4*(1+want) {
			t.Errorf("%s/%s: loss %v, slow recomputation %v", af.algo, af.form, info.Loss, want)
		}
		for _, s := range segs {
			if s.Terminated {
				s.Terminated = false
				break
			}
		}
		flipped, err := l.Loss(segs, false)
		if err != nil {
			t.Fatal(err)
		}
		if flipped.Loss == info.Loss {
			t.Errorf("%s/%s: reading a terminated segment as cut left the loss at %v", af.algo, af.form, info.Loss)
		}
	}
}

// The gradient through the policy and value networks matches finite differences of the loss along
// random directions, for every algorithm and form (pg-scale none and critic weight 1 make it the
// exact gradient of the loss).
func TestGradientThroughNetworksFiniteDifferences(t *testing.T) {
	for i, af := range algoForms {
		cfg := testConfig(af.algo, af.form, int64(20+i))
		cfg.PGScale, cfg.CriticWeight = config.PGScaleNone, 1
		cfg.ValueScale = []float64{1, 3}[(i/2)%2] // a scaled V head for sparse/separate
		l, err := NewLearner(cfg, testDim, testActions, tensor.GonumEngine())
		if err != nil {
			t.Fatal(err)
		}
		sharpen(l, 4)
		rng := rand.New(rand.NewPCG(uint64(i), 9))
		segs := randomSegments(rng, 6)
		if _, err := l.Loss(segs, true); err != nil {
			t.Fatal(err)
		}
		loss := func() float64 {
			info, err := l.Loss(segs, false)
			if err != nil {
				t.Fatal(err)
			}
			return info.Loss
		}
		nntest.CheckDirectional(t, l.Params(), loss, rng, 3, fmt.Sprintf("%s/%s", af.algo, af.form))
	}
}

func TestLossRejectsBadSegments(t *testing.T) {
	l, err := NewLearner(testConfig(config.AlgoSparse, config.FormSeparate, 1), testDim, testActions, tensor.GonumEngine())
	if err != nil {
		t.Fatal(err)
	}
	good := func() *Segment {
		return &Segment{Obs: make([]float32, 2*testDim), Actions: []int32{1}, Rewards: []float64{0}}
	}
	cases := []struct {
		name string
		seg  func() *Segment
	}{
		{"no steps", func() *Segment { return &Segment{Obs: make([]float32, testDim)} }},
		{"short observations", func() *Segment { s := good(); s.Obs = s.Obs[:testDim]; return s }},
		{"action out of range", func() *Segment { s := good(); s.Actions[0] = testActions; return s }},
		{"negative action", func() *Segment { s := good(); s.Actions[0] = -1; return s }},
		{"both ends", func() *Segment { s := good(); s.Terminated, s.Truncated = true, true; return s }},
	}
	for _, tc := range cases {
		if _, err := l.Loss([]*Segment{good(), tc.seg()}, true); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	if _, err := l.Loss(nil, true); err == nil {
		t.Error("empty batch: no error")
	}
}

// Sparse PCL's output layer takes the sparse backward pass; it gives the dense pass's gradients.
func TestSparseOutputBackwardEqualsDense(t *testing.T) {
	cfg := testConfig(config.AlgoSparse, config.FormSeparate, 31)
	sparse, err := NewLearner(cfg, testDim, testActions, tensor.GonumEngine())
	if err != nil {
		t.Fatal(err)
	}
	dense, err := NewLearner(cfg, testDim, testActions, tensor.GonumEngine())
	if err != nil {
		t.Fatal(err)
	}
	if !sparse.Model.sparseLogits {
		t.Fatal("sparse PCL in the separate form does not take the sparse backward pass")
	}
	dense.Model.sparseLogits = false
	sparse.Model.sparseLimit = 1 // always the sparse pass, however dense this small batch is
	sharpen(sparse, 6)
	sharpen(dense, 6)
	segs := randomSegments(rand.New(rand.NewPCG(4, 4)), 7)
	if _, err := sparse.Loss(segs, true); err != nil {
		t.Fatal(err)
	}
	if _, err := dense.Loss(segs, true); err != nil {
		t.Fatal(err)
	}
	if dy := sparse.Model.dyRows; dy.NNZ() >= dy.Rows*dy.Cols || dy.NNZ() == 0 {
		t.Errorf("the logits' gradient has %d non-zeros in %d x %d: the batch does not exercise sparsity", dy.NNZ(), dy.Rows, dy.Cols)
	}
	for i, p := range sparse.Params() {
		q := dense.Params()[i]
		for k := range p.Grad.Data {
			if d := math.Abs(float64(p.Grad.Data[k] - q.Grad.Data[k])); d > 1e-5*(1+math.Abs(float64(q.Grad.Data[k]))) {
				t.Fatalf("%s[%d]: sparse pass %v, dense %v", p.Name, k, p.Grad.Data[k], q.Grad.Data[k])
			}
		}
	}
}
