package pcl_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/episode"
	"github.com/sparsepcl/sparsepcl/agent/model/lstm"
	"github.com/sparsepcl/sparsepcl/agent/nn/nntest"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/policy/policytest"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

var testSpec = lstm.Spec{ObsVocab: 3, ActionComponents: []int{2, 2, 2}} // |A| = 8, Copy with base 2

func randomEpisodes(rng *rand.Rand, n int) []*episode.Episode {
	eps := make([]*episode.Episode, n)
	for i := range eps {
		L := 1 + rng.IntN(6)
		e := &episode.Episode{Terminated: rng.IntN(2) == 0}
		for t := 0; t < L; t++ {
			e.Obs = append(e.Obs, int32(rng.IntN(3)))
			e.Actions = append(e.Actions, int32(rng.IntN(8)))
			e.Rewards = append(e.Rewards, float64(rng.IntN(3))-0.5)
		}
		e.Obs = append(e.Obs, int32(rng.IntN(3)))
		eps[i] = e
	}
	return eps
}

// slowLoss recomputes the loss from the definitions: heads from the network in step mode (one
// step at a time, an independent code path from Forward), per-step terms from the paper's
// formulas in float64, and the rows by direct enumeration (directLoss).
func slowLoss(t *testing.T, m *lstm.Model, cfg config.Config, eps []*episode.Episode) float64 {
	K := m.Spec.NumActions()
	B := len(eps)
	T := 0
	for _, e := range eps {
		T = max(T, e.Len())
	}
	in := pcl.PathInputs{T: T, B: B, Lengths: make([]int, B), Terminated: make([]bool, B),
		Values: make([]float64, (T+1)*B), Rewards: make([]float64, T*B), Terms: make([]float64, T*B)}
	sizes := m.Net.Config().HeadSizes
	for b, e := range eps {
		in.Lengths[b], in.Terminated[b] = e.Len(), e.Terminated
		st := m.Net.NewState(1)
		outs := make([]*tensor.Matrix, len(sizes))
		for i, s := range sizes {
			outs[i] = tensor.New(1, s)
		}
		tok := make([]int32, m.Spec.Features())
		for s := 0; s <= e.Len(); s++ {
			tok[0] = e.Obs[s]
			prev := -1
			if s > 0 {
				prev = int(e.Actions[s-1])
			}
			m.Spec.PrevActionTokens(tok[1:], prev)
			if err := m.Net.Step(st, tok, outs); err != nil {
				t.Fatal(err)
			}
			z := make([]float64, K)
			for i := range z {
				z[i] = float64(outs[0].Data[i])
				if cfg.Form == config.FormUnified {
					z[i] /= cfg.Alpha
				}
			}
			alpha := cfg.Alpha
			var p []float64
			var v float64
			switch cfg.Algo {
			case config.AlgoSoft:
				var lse float64
				p, lse = policytest.Softmax(z)
				v = alpha * lse
			case config.AlgoSparse:
				p, _ = policytest.Sparsemax(z)
				v = alpha * policytest.Spmax(z)
			default:
				q := cfg.TsallisQ
				p = policytest.Entmax(z, q)
				// Omega* = <p, z> + (1 - sum p^q)/(q(q-1))
				dot, spq := 0.0, 0.0
				for i := range z {
					dot += p[i] * z[i]
					spq += math.Pow(p[i], q)
				}
				v = alpha * (dot + (1-spq)/(q*(q-1)))
			}
			if cfg.Form == config.FormSeparate {
				v = float64(outs[1].Data[0])
			}
			in.Values[s*B+b] = v
			if s == e.Len() {
				continue
			}
			a := int(e.Actions[s])
			in.Rewards[s*B+b] = e.Rewards[s]
			var term float64
			switch cfg.Algo {
			case config.AlgoSoft:
				term = -alpha * math.Log(p[a])
			case config.AlgoSparse:
				_, g := policytest.Sparsemax(z)
				mu := math.Max(z[a]-g, 0)
				lam := math.Max(g-z[a], 0) * math.Exp(float64(outs[m.LambdaHead].Data[0]))
				bigLam := -alpha / 2 / (1 + math.Exp(-float64(outs[m.BigHead].Data[0])))
				term = alpha/2 - alpha*mu + lam - bigLam
			default:
				q := cfg.TsallisQ
				spq := 0.0
				for _, x := range p {
					spq += math.Pow(x, q)
				}
				phi := (math.Pow(p[a], q-1)-1)/(q-1) + (1-spq)/q
				term = -alpha * phi
				if p[a] == 0 {
					// tau of entmax in z coordinates: (q-1) z_i - tau = p_i^(q-1) on the support.
					var tau float64
					for i := range p {
						if p[i] > 0 {
							tau = (q-1)*z[i] - math.Pow(p[i], q-1)
							break
						}
					}
					term += math.Max(tau-(q-1)*z[a], 0) / (q - 1) * math.Exp(float64(outs[m.LambdaHead].Data[0]))
				}
			}
			in.Terms[s*B+b] = term
		}
	}
	return pcl.DirectLoss(in, cfg.Gamma, cfg.Rollout)
}

var algoForms = []struct {
	algo config.Algo
	form config.Form
}{
	{config.AlgoSoft, config.FormSeparate}, {config.AlgoSoft, config.FormUnified},
	{config.AlgoSparse, config.FormSeparate}, {config.AlgoSparse, config.FormUnified},
	{config.AlgoTsallis, config.FormSeparate}, {config.AlgoTsallis, config.FormUnified},
}

func TestLossMatchesSlowRecomputation(t *testing.T) {
	for i, af := range algoForms {
		cfg := pcl.SmallConfig(af.algo, af.form)
		cfg.Seed = int64(10 + i)
		l, err := lstm.NewLearner(cfg, testSpec, tensor.GonumEngine())
		if err != nil {
			t.Fatal(err)
		}
		// Larger logits so that sparse policies have non-trivial supports.
		for _, p := range l.Params() {
			if p.Name == "head0.W" {
				for k := range p.Value.Data {
					p.Value.Data[k] *= 6
				}
			}
		}
		eps := randomEpisodes(rand.New(rand.NewPCG(uint64(i), 7)), 5)
		info, err := l.Loss(eps, false)
		if err != nil {
			t.Fatal(err)
		}
		want := slowLoss(t, l.Model, cfg, eps)
		if math.Abs(info.Loss-want) > 1e-4*(1+want) {
			t.Errorf("%s/%s: loss %v, slow recomputation %v", af.algo, af.form, info.Loss, want)
		}
	}
}

// The gradient through the whole network matches finite differences of the loss along random
// directions (pg-scale none and critic weight 1 make it the exact gradient of the loss).
func TestGradientThroughNetworkFiniteDifferences(t *testing.T) {
	for i, af := range algoForms {
		cfg := pcl.SmallConfig(af.algo, af.form)
		cfg.PGScale, cfg.CriticWeight, cfg.Seed = config.PGScaleNone, 1, int64(20+i)
		l, err := lstm.NewLearner(cfg, testSpec, tensor.GonumEngine())
		if err != nil {
			t.Fatal(err)
		}
		scaleLogitHead(l, 4)
		rng := rand.New(rand.NewPCG(uint64(i), 9))
		checkGradientFD(t, l, randomEpisodes(rng, 4), rng, string(af.algo)+"/"+string(af.form))
	}
}

// scaleLogitHead multiplies the logit head's weights by f, so that sparse policies have
// non-trivial supports.
func scaleLogitHead(l *lstm.Learner, f float32) {
	for _, p := range l.Params() {
		if p.Name == "head0.W" {
			for k := range p.Value.Data {
				p.Value.Data[k] *= f
			}
		}
	}
}

// checkGradientFD compares l's gradient of the loss of eps with central finite differences along
// three random directions.
func checkGradientFD(t *testing.T, l *lstm.Learner, eps []*episode.Episode, rng *rand.Rand, label string) {
	t.Helper()
	if _, err := l.Loss(eps, true); err != nil {
		t.Fatal(err)
	}
	loss := func() float64 {
		info, err := l.Loss(eps, false)
		if err != nil {
			t.Fatal(err)
		}
		return info.Loss
	}
	nntest.CheckDirectional(t, l.Params(), loss, rng, 3, label)
}

// Each optimiser config accepts is one optim.New makes: config names them again, as it imports
// no optimiser.
func TestLearnerBuildsEveryConfigOptimizer(t *testing.T) {
	for _, tc := range []struct {
		name config.Optimizer
		want string
	}{{config.OptimizerAdam, "*optim.Adam"}, {config.OptimizerSGD, "*optim.SGD"}, {config.OptimizerRMSProp, "*optim.RMSProp"}} {
		cfg := pcl.SmallConfig(config.AlgoSparse, config.FormSeparate)
		cfg.Optimizer = tc.name
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		l, err := lstm.NewLearner(cfg, testSpec, tensor.GonumEngine())
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := fmt.Sprintf("%T", l.Opt); got != tc.want {
			t.Errorf("%s: optimiser %s, want %s", tc.name, got, tc.want)
		}
	}
}

// The one learner's step on the LSTM reports the clip factor (clip/norm when the clip binds, 1
// when not) and, for a network without separate value parameters, no per-network norms.
func TestTrainStepReportsTheClip(t *testing.T) {
	for _, clip := range []float64{1e-4, 1e6} {
		cfg := pcl.SmallConfig(config.AlgoSparse, config.FormSeparate)
		cfg.ClipNorm = clip
		l, err := lstm.NewLearner(cfg, testSpec, tensor.GonumEngine())
		if err != nil {
			t.Fatal(err)
		}
		info, err := l.TrainStep(randomEpisodes(rand.New(rand.NewPCG(4, 5)), 4))
		if err != nil {
			t.Fatal(err)
		}
		want := 1.0
		if info.GradNorm > clip {
			want = clip / info.GradNorm
		}
		if info.ClipScale != want || !math.IsNaN(info.GradNormPolicy) || !math.IsNaN(info.GradNormValue) {
			t.Errorf("clip %v: clip scale %v (want %v), policy and value norms %v %v (want NaN)", clip, info.ClipScale, want,
				info.GradNormPolicy, info.GradNormValue)
		}
	}
}

// After a learner's loss, the surpluses are those of its values and terms, the same on the fast
// and the reference path, for every algorithm and form.
func TestSurplusesAfterLoss(t *testing.T) {
	for i, af := range algoForms {
		cfg := pcl.SmallConfig(af.algo, af.form)
		cfg.Seed = int64(30 + i)
		eps := randomEpisodes(rand.New(rand.NewPCG(uint64(i), 9)), 6)
		var runs [2][]float64
		for k, reference := range []bool{false, true} {
			l, err := lstm.NewLearner(cfg, testSpec, tensor.GonumEngine())
			if err != nil {
				t.Fatal(err)
			}
			l.Objective().Reference = reference
			if _, err := l.Loss(eps, false); err != nil {
				t.Fatal(err)
			}
			runs[k] = l.Objective().Surpluses(nil)
			// Recompute episode by episode from the returned per-row values and terms.
			B := len(eps)
			for b, e := range eps {
				L := e.Len()
				tail := 0.0
				if !e.Terminated {
					tail = l.Objective().Value(L*B + b)
				}
				best := math.Inf(-1)
				for s := L - 1; s >= 0; s-- {
					tail = e.Rewards[s] + l.Objective().Term(s*B+b) + cfg.Gamma*tail
					best = math.Max(best, tail-l.Objective().Value(s*B+b))
				}
				if math.Abs(runs[k][b]-best) > 1e-9 {
					t.Errorf("%s/%s reference %v: episode %d surplus %v, recomputed %v", af.algo, af.form, reference, b, runs[k][b], best)
				}
			}
		}
		for b := range runs[0] {
			if d := math.Abs(runs[0][b] - runs[1][b]); d > 1e-4*(1+math.Abs(runs[1][b])) {
				t.Errorf("%s/%s: episode %d surplus %v on the fast path, %v on the reference", af.algo, af.form, b, runs[0][b], runs[1][b])
			}
		}
	}
}
