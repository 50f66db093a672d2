package mlp

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/collect"
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/policy"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// fastSegments are n segments of lengths 1..5 over k actions, cycling through the kinds of end.
func fastSegments(rng *rand.Rand, n, k int) []*Segment {
	segs := make([]*Segment, n)
	for i := range segs {
		kind := segmentKinds[i%len(segmentKinds)]
		L := 1 + rng.IntN(5)
		s := &Segment{Terminated: kind.terminated, Truncated: kind.truncated}
		for t := 0; t <= L; t++ {
			for range testDim {
				s.Obs = append(s.Obs, float32(rng.NormFloat64()))
			}
			if t < L {
				s.Actions = append(s.Actions, int32(rng.IntN(k)))
				s.Rewards = append(s.Rewards, rng.NormFloat64())
			}
		}
		segs[i] = s
	}
	return segs
}

// The learner's fast path (float32 row passes over parallel workers, sparse PCL's logit gradient
// as sparse rows into the sparse output-layer backward, soft PCL's at 15,625 actions as row factors
// into the row-scaled one, with the fused exponential) gives the loss and the parameter
// gradients of the reference path within 1e-5 relative (per parameter, in norm), for every algorithm and form at the
// HalfCheetah grids' action counts, flat (untrained) and spread logits alike.
func TestFastLearnerMatchesReference(t *testing.T) {
	for _, k := range []int{729, 15625} {
		for i, af := range algoForms {
			for _, by := range []float32{1, 60} {
				name := fmt.Sprintf("%s/%s/K=%d/sharpen=%v", af.algo, af.form, k, by)
				cfg := testConfig(af.algo, af.form, int64(40+i))
				cfg.Alpha = 0.1
				learner := func(ref bool) *Learner {
					l, err := NewLearner(cfg, testDim, k, tensor.GonumEngine())
					if err != nil {
						t.Fatal(err)
					}
					sharpen(l, by)
					l.Objective().Reference = ref
					l.Objective().Workers = 2
					l.Model.sparseLimit = 1 // the sparse output-layer pass whatever the density
					return l
				}
				fast, ref := learner(false), learner(true)
				segs := fastSegments(rand.New(rand.NewPCG(uint64(k), uint64(i))), 4, k)
				want, err := ref.Loss(segs, true)
				if err != nil {
					t.Fatal(err)
				}
				got, err := fast.Loss(segs, true)
				if err != nil {
					t.Fatal(err)
				}
				wantScaled := af.algo == config.AlgoSoft && k >= scaledLogitsMinActions
				if scaled := fast.Model.dyScaled.Rows() > 0; scaled != wantScaled || ref.Model.dyScaled.Rows() != 0 {
					t.Fatalf("%s: row-scaled logit gradient %v (reference's %d rows), want %v", name, scaled, ref.Model.dyScaled.Rows(), wantScaled)
				}
				// The fused exponential goes with the row factors: where the bits already part.
				if fused := fast.Model.Heads.Exp == policy.ExpFused; fused != wantScaled {
					t.Fatalf("%s: fused exponential %v, want %v", name, fused, wantScaled)
				}
				if math.Abs(got.Loss-want.Loss) > 1e-5*math.Abs(want.Loss) {
					t.Errorf("%s: loss %v, reference %v", name, got.Loss, want.Loss)
				}
				// Each parameter's gradient, relative in the Euclidean norm: the trunk's entries are
				// sums over |A| logits whose gradient sums to zero (soft), so single entries carry
				// the cancellation of float32 rounding in both paths alike.
				for j, p := range fast.Params() {
					q := ref.Params()[j]
					var dd, nn float64
					for e, v := range q.Grad.Data {
						d := float64(p.Grad.Data[e] - v)
						dd += d * d
						nn += float64(v) * float64(v)
					}
					if math.Sqrt(dd) > 1e-5*math.Sqrt(nn) {
						t.Errorf("%s: %s: relative difference %.3g (norm %.3g)", name, p.Name, math.Sqrt(dd/nn), math.Sqrt(nn))
					}
				}
			}
		}
	}
}

// The collector's batched draw (the policy of every copy from the float32 row kernels, sparse
// policies sampled over their support) picks the action that inverting the reference policy's
// cumulative distribution picks, from the same uniform numbers in copy order, and records the
// same statistics.
func TestCollectorDrawMatchesReferencePolicy(t *testing.T) {
	for _, k := range []int{729, 15625} {
		for i, af := range algoForms {
			for _, by := range []float32{1, 60} {
				cfg := testConfig(af.algo, af.form, int64(60+i))
				cfg.Alpha = 0.1
				l, err := NewLearner(cfg, testDim, k, tensor.GonumEngine())
				if err != nil {
					t.Fatal(err)
				}
				sharpen(l, by)
				const n = 8
				c, _, err := newNoiseCollector(l, k, n, uint64(k+i))
				if err != nil {
					t.Fatal(err)
				}
				checkDrawsAgainstReference(t, fmt.Sprintf("%s/%s K=%d sharpen=%v", af.algo, af.form, k, by), l, c, n)
			}
		}
	}
}

// checkDrawsAgainstReference collects 20 one-step iterations of the n copies of c and checks each
// copy's action and the batch's policy statistics against the reference path: the policy of the
// observation the copy acted on, by Probs, inverted at the same uniform number.
func checkDrawsAgainstReference(t *testing.T, name string, l *Learner, c *collect.Collector[float32], n int) {
	t.Helper()
	D := l.Model.Dim
	x, obs := tensor.New(n, D), make([]float32, n*D)
	K := l.Model.NumActions()
	p, z := make([]float32, K), make([]float32, K)
	for round := range 20 {
		seed := uint64(1000*round + 7)
		b, err := c.Segments(context.Background(), rand.New(rand.NewPCG(seed, 1)), 1, round)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Trajectories) != n {
			t.Fatalf("%s round %d: %d sub-episodes for %d copies", name, round, len(b.Trajectories), n)
		}
		for i, s := range b.Trajectories {
			copy(obs[i*D:(i+1)*D], s.Obs[:D])
		}
		l.Model.Input(x, obs)
		heads, err := l.Model.Forward(x)
		if err != nil {
			t.Fatal(err)
		}
		us := rand.New(rand.NewPCG(seed, 1))
		var want pcl.Stats
		for i, s := range b.Trajectories {
			l.Model.Probs(p, z, heads[0].Row(i))
			if a := policy.SampleWithUniform(p, us.Float64()); int(s.Actions[0]) != a {
				t.Errorf("%s round %d copy %d: action %d, reference %d", name, round, i, s.Actions[0], a)
			}
			want.Add(p)
		}
		if math.Abs(b.Stats.MaxProbSum-want.MaxProbSum) > 1e-5*want.MaxProbSum || b.Stats.SupportSum != want.SupportSum {
			t.Errorf("%s round %d: statistics %v %v, reference %v %v", name, round, b.Stats.MaxProbSum, b.Stats.SupportSum, want.MaxProbSum, want.SupportSum)
		}
	}
}

// Soft PCL's first pass takes each row's maximum from the range the output layer's product
// reports (the wide kernel, 15,625 actions) and gives the loss and every parameter gradient bit
// for bit as when it reads the rows for it, flat and spread logits, both forms.
func TestRowRangeKeepsTheBits(t *testing.T) {
	const k = 15625
	eng, err := tensor.NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	for i, form := range []config.Form{config.FormSeparate, config.FormUnified} {
		for _, by := range []float32{1, 60} {
			name := fmt.Sprintf("%s/sharpen=%v", form, by)
			cfg := testConfig(config.AlgoSoft, form, int64(60+i))
			cfg.Alpha = 0.1
			learner := func(withRange bool) *Learner {
				l, err := NewLearner(cfg, testDim, k, eng)
				if err != nil {
					t.Fatal(err)
				}
				sharpen(l, by)
				if !withRange {
					l.Model.logitRange, l.Model.outputs[0].Range = nil, nil
				}
				return l
			}
			with, without := learner(true), learner(false)
			// 16 segments: 96 rows of 15,625, enough for the output layer's bias-folded product,
			// which takes the wide kernel.
			segs := fastSegments(rand.New(rand.NewPCG(uint64(k), uint64(i))), 16, k)
			want, err := without.Loss(segs, true)
			if err != nil {
				t.Fatal(err)
			}
			got, err := with.Loss(segs, true)
			if err != nil {
				t.Fatal(err)
			}
			if !with.Model.logitRange.Valid {
				if os.Getenv("CI") == "true" {
					t.Fatalf("%s: the product reported no range under CI=true (no OpenBLAS, or no wide kernel on this CPU)", name)
				}
				t.Skipf("%s: the product reported no range (no OpenBLAS, or no wide kernel on this CPU)", name)
			}
			if got.Loss != want.Loss {
				t.Errorf("%s: loss %v, %v without the range", name, got.Loss, want.Loss)
			}
			for j, p := range with.Params() {
				q := without.Params()[j]
				for e, v := range q.Grad.Data {
					if math.Float32bits(p.Grad.Data[e]) != math.Float32bits(v) {
						t.Fatalf("%s: %s[%d] = %v, %v without the range", name, p.Name, e, p.Grad.Data[e], v)
					}
				}
			}
		}
	}
}
