package control

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/policy"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// benchSegments are 25 sub-episodes of 100 steps of HalfCheetah-sized observations (17).
func benchSegments(rng *rand.Rand, k int) []*Segment {
	segs := make([]*Segment, 25)
	for i := range segs {
		s := &Segment{Obs: make([]float32, 101*17), Actions: make([]int32, 100), Rewards: make([]float64, 100)}
		for j := range s.Obs {
			s.Obs[j] = float32(rng.NormFloat64())
		}
		for j := range s.Actions {
			s.Actions[j] = int32(rng.IntN(k))
			s.Rewards[j] = rng.NormFloat64()
		}
		segs[i] = s
	}
	return segs
}

func benchLearner(b *testing.B, algo string, k int) *Learner {
	cfg := config.Default()
	cfg.Net, cfg.Algo, cfg.Alpha, cfg.Gamma = config.NetMLP, algo, 0.1, 0.99
	eng, err := tensor.NewEngine()
	if err != nil {
		b.Fatal(err)
	}
	l, err := NewLearner(cfg, 17, k, eng)
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// BenchmarkTrainStep is one paper-sized training step (25 x 100 steps) at the HalfCheetah grids.
func BenchmarkTrainStep(b *testing.B) {
	for _, k := range []int{729, 15625} {
		for _, algo := range []string{config.AlgoSparse, config.AlgoSoft} {
			b.Run(fmt.Sprintf("%s/A=%d", algo, k), func(b *testing.B) {
				l := benchLearner(b, algo, k)
				segs := benchSegments(rand.New(rand.NewPCG(1, 2)), k)
				for b.Loop() {
					if _, err := l.TrainStep(segs); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkPolicyStep is one sampling step of one copy: the forward pass, the policy and a draw.
func BenchmarkPolicyStep(b *testing.B) {
	for _, k := range []int{729, 15625} {
		for _, algo := range []string{config.AlgoSparse, config.AlgoSoft} {
			b.Run(fmt.Sprintf("%s/A=%d", algo, k), func(b *testing.B) {
				l := benchLearner(b, algo, k)
				x := tensor.New(1, 17)
				p, z := make([]float32, k), make([]float32, k)
				rng := rand.New(rand.NewPCG(1, 2))
				for b.Loop() {
					heads, err := l.Model.Forward(x)
					if err != nil {
						b.Fatal(err)
					}
					l.Model.Probs(p, z, heads[0].Row(0))
					policy.Sample(p, rng)
				}
			})
		}
	}
}
