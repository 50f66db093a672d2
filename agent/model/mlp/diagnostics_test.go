package mlp

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/collect"
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/nn/optim"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// setValue makes the value network output the constant c: every weight zero, the last bias c.
func setValue(l *Learner, c float32) {
	ps := l.Model.ValueParams()
	for _, p := range ps {
		clear(p.Value.Data)
	}
	ps[len(ps)-1].Value.Data[0] = c
}

// The batch's value diagnostics: V is the value network's output times the value scale, averaged
// over the states with a known return; the return is the mean of those returns; segments whose
// episode has not ended are left out of both.
func TestDiagnosticsOnAConstructedBatch(t *testing.T) {
	for _, scale := range []float64{1, 10} {
		cfg := testConfig(config.AlgoSparse, config.FormSeparate, 5)
		cfg.ValueScale = scale
		l, err := NewLearner(cfg, testDim, testActions, tensor.GonumEngine())
		if err != nil {
			t.Fatal(err)
		}
		setValue(l, -2)
		segs := randomSegments(rand.New(rand.NewPCG(3, 4)), 3)
		segs[0].ReturnToGo = make([]float64, segs[0].Len())
		for t := range segs[0].ReturnToGo {
			segs[0].ReturnToGo[t] = float64(t) // known returns 0, 1, ..., L-1
		}
		segs[2].ReturnToGo = make([]float64, segs[2].Len())
		for t := range segs[2].ReturnToGo {
			segs[2].ReturnToGo[t] = -30
		}
		n0, n2 := segs[0].Len(), segs[2].Len()
		wantRet := (float64(n0*(n0-1))/2 - 30*float64(n2)) / float64(n0+n2)
		if _, err := l.TrainStep(segs); err != nil {
			t.Fatal(err)
		}
		step := ValueDiagnostics(l, segs)
		if want := -2 * scale; math.Abs(step.ValueMean-want) > 1e-6 {
			t.Errorf("scale %v: value_mean %v, want %v", scale, step.ValueMean, want)
		}
		if math.Abs(step.ReturnDiscounted-wantRet) > 1e-12 {
			t.Errorf("scale %v: return_discounted %v, want %v", scale, step.ReturnDiscounted, wantRet)
		}
	}
	// No segment with a known return: both NaN.
	l, err := NewLearner(testConfig(config.AlgoSoft, config.FormSeparate, 5), testDim, testActions, tensor.GonumEngine())
	if err != nil {
		t.Fatal(err)
	}
	segs := randomSegments(rand.New(rand.NewPCG(3, 4)), 3)
	if _, err := l.TrainStep(segs); err != nil {
		t.Fatal(err)
	}
	if step := ValueDiagnostics(l, segs); !math.IsNaN(step.ValueMean) || !math.IsNaN(step.ReturnDiscounted) {
		t.Errorf("no known return: value_mean %v, return_discounted %v, want NaN", step.ValueMean, step.ReturnDiscounted)
	}
}

// The gradient diagnostics: the policy and value norms make up the global norm, and the clip factor
// is clip/norm when the clip binds (the gradient left is then exactly clip long) and 1 when not.
func TestDiagnosticsOfTheClip(t *testing.T) {
	for _, af := range algoForms {
		for _, clip := range []float64{1e-3, 1e6, 0} {
			cfg := testConfig(af.algo, af.form, 6)
			cfg.ClipNorm = clip
			l, err := NewLearner(cfg, testDim, testActions, tensor.GonumEngine())
			if err != nil {
				t.Fatal(err)
			}
			sharpen(l, 4)
			segs := randomSegments(rand.New(rand.NewPCG(5, 6)), 6)
			if _, err := l.Loss(segs, true); err != nil {
				t.Fatal(err)
			}
			norm := optim.GlobalNorm(l.Params())
			step, err := l.TrainStep(segs)
			if err != nil {
				t.Fatal(err)
			}
			if d := math.Hypot(step.GradNormPolicy, step.GradNormValue) - step.GradNorm; math.Abs(d) > 1e-6*step.GradNorm {
				t.Errorf("%s/%s: policy %v and value %v norms do not make up %v", af.algo, af.form, step.GradNormPolicy, step.GradNormValue, step.GradNorm)
			}
			if math.Abs(step.GradNorm-norm) > 1e-9*norm {
				t.Errorf("%s/%s: grad_norm %v, the gradient's norm is %v", af.algo, af.form, step.GradNorm, norm)
			}
			want := 1.0
			if clip > 0 && norm > clip {
				want = clip / norm
			}
			if math.Abs(step.ClipScale-want) > 1e-12 {
				t.Errorf("%s/%s clip %v: clip_scale %v, want %v", af.algo, af.form, clip, step.ClipScale, want)
			}
			if af.form == config.FormUnified && step.GradNormValue != 0 {
				t.Errorf("%s/unified: value gradient norm %v without a value network", af.algo, step.GradNormValue)
			}
		}
	}
}

// FillReturnsToGo over the collector's ended episodes fills the returns to go of every segment of
// an episode once it ends, and only then.
func TestCollectFillsReturnsToGoAtEpisodeEnd(t *testing.T) {
	s, l, _ := newCopySampler(t, 2, 4)
	rng := rand.New(rand.NewPCG(1, 2))
	var all []*Segment
	for it := range 4 {
		col, err := s.Segments(context.Background(), rng, 7, it)
		if err != nil {
			t.Fatal(err)
		}
		collect.FillReturnsToGo(col.Ended, l.Config().Gamma)
		all = append(all, col.Trajectories...)
	}
	ended := 0
	for _, seg := range all {
		if seg.ReturnToGo == nil {
			continue
		}
		ended++
		if len(seg.ReturnToGo) != seg.Len() {
			t.Fatalf("segment of %d steps has %d returns to go", seg.Len(), len(seg.ReturnToGo))
		}
		for t0 := seg.Len() - 2; t0 >= 0; t0-- {
			if want := seg.Rewards[t0] + l.Config().Gamma*seg.ReturnToGo[t0+1]; math.Abs(seg.ReturnToGo[t0]-want) > 1e-12 {
				t.Errorf("G[%d] = %v, want r + gamma G[%d] = %v", t0, seg.ReturnToGo[t0], t0+1, want)
			}
		}
		if seg.Terminated || seg.Truncated {
			if seg.ReturnToGo[seg.Len()-1] != seg.Rewards[seg.Len()-1] {
				t.Errorf("the last step's return to go %v is not its reward %v", seg.ReturnToGo[seg.Len()-1], seg.Rewards[seg.Len()-1])
			}
		}
	}
	for _, seg := range all[len(all)-2:] {
		if !seg.Terminated && !seg.Truncated && seg.ReturnToGo != nil {
			t.Error("a segment of an episode still running has returns to go")
		}
	}
	if ended == 0 {
		t.Error("no segment got its returns to go")
	}
}

// The logit layer's initial scale: 1 keeps Glorot's weights, 0 starts every policy uniform, and a
// small scale starts the sparsemax policy near uniform over every action.
func TestLogitInitScale(t *testing.T) {
	const K = 729
	policyAt := func(scale float64) ([]float32, *Learner) {
		cfg := testConfig(config.AlgoSparse, config.FormSeparate, 8)
		cfg.LogitInitScale, cfg.Alpha = scale, 0.5
		l, err := NewLearner(cfg, testDim, K, tensor.GonumEngine())
		if err != nil {
			t.Fatal(err)
		}
		x := tensor.New(1, testDim)
		for i := range x.Data {
			x.Data[i] = float32(i) - 1
		}
		heads, err := l.Model.Forward(x)
		if err != nil {
			t.Fatal(err)
		}
		p, z := make([]float32, K), make([]float32, K)
		l.Model.Probs(p, z, heads[0].Row(0))
		return p, l
	}
	maxOf := func(p []float32) (m float32, support int) {
		for _, v := range p {
			m = max(m, v)
			if v > 0 {
				support++
			}
		}
		return m, support
	}
	_, glorot := policyAt(1)
	cfg := testConfig(config.AlgoSparse, config.FormSeparate, 8)
	cfg.Alpha = 0.5
	def, err := NewLearner(cfg, testDim, K, tensor.GonumEngine())
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range glorot.Params() {
		for k, v := range p.Value.Data {
			if v != def.Params()[i].Value.Data[k] {
				t.Fatalf("scale 1 changed %s[%d]", p.Name, k)
			}
		}
	}
	if m, s := maxOf(probsOf(policyAt(0))); math.Abs(float64(m)-1.0/K) > 1e-6 || s != K {
		t.Errorf("scale 0: the initial policy has max-prob %v over %d actions, want uniform", m, s)
	}
	mg, sg := maxOf(probsOf(policyAt(1)))
	ms, ss := maxOf(probsOf(policyAt(0.01)))
	if !(ss == K && ms < 2.0/K && sg < K/2 && mg > 5.0/K) {
		t.Errorf("max-prob and support: Glorot %v over %d actions, scale 0.01 %v over %d (want a few dozen, then all %d)", mg, sg, ms, ss, K)
	}
}

func probsOf(p []float32, _ *Learner) []float32 { return p }
