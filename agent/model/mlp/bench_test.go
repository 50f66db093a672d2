package mlp

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/internal/cputime"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/policy"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs"
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

func benchLearner(b testing.TB, algo config.Algo, k int) *Learner {
	return benchLearnerWith(b, algo, k, func(*config.Config) {})
}

// benchLearnerWith is benchLearner with edit applied to its config.
func benchLearnerWith(b testing.TB, algo config.Algo, k int, edit func(*config.Config)) *Learner {
	cfg := config.Default()
	cfg.Net, cfg.Algo, cfg.Alpha, cfg.Gamma = config.NetMLP, algo, 0.1, 0.99
	edit(&cfg)
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

// benchVariant is the learner of a benchmark cell, named by its algorithm and whether its network is
// peaked: "sparse", "soft", or either with "-peaked" (see peak).
func benchVariant(b testing.TB, variant string, k int) *Learner {
	l := benchLearner(b, config.Algo(strings.TrimSuffix(variant, "-peaked")), k)
	if strings.HasSuffix(variant, "-peaked") {
		peak(l)
	}
	return l
}

// peak scales l's output layer by 30, so that its rows keep about the support of a trained
// HalfCheetah policy (1-2 actions, docs/results/halfcheetah-paper) instead of the flat rows of an
// untrained network.
func peak(l *Learner) {
	for i := range l.Model.outputs[0].W.Value.Data {
		l.Model.outputs[0].W.Value.Data[i] *= 30
	}
}

// BenchmarkTrainStep is one paper-sized training step (25 x 100 steps) at the HalfCheetah grids.
func BenchmarkTrainStep(b *testing.B) {
	for _, k := range []int{729, 15625} {
		for _, algo := range []config.Algo{config.AlgoSparse, config.AlgoSoft} {
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
		for _, algo := range []config.Algo{config.AlgoSparse, config.AlgoSoft} {
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

// BenchmarkTrainStepVsGemm times, alternately in the same run, a paper-sized training step
// (25 x 101 rows) on the fast path, the same step on the reference path (Objective.Reference:
// float64 row passes on one goroutine, the policy written out, the logits' gradient dense) and
// the bare forward GEMM of the output layer (2525 x 64 times 64 x |A|), and reports the step's
// time over the GEMM's (x-gemm), the reference step's (ref-x-gemm) and their ratio (speedup);
// cpu-x-gemm and cpu-speedup are the same ratios in process CPU time (every thread), which
// other load on the machine disturbs less. It also times, in the same rounds, the layer's two
// dense backward GEMMs (dW = Xᵀ·dZ, dX = dZ·Wᵀ): floor-x-gemm (cpu-floor-x-gemm in CPU time) is
// the three GEMMs over the forward one, the floor of a step whose logit gradient is dense (soft
// PCL), and x-floor (cpu-x-floor) the step over those three. The step also runs the two 2 x H
// trunks (the policy's and the value network's), whose products the output layer's floor leaves
// out: trunk-ms times them in the same rounds, and x-net-floor (cpu-x-net-floor) is the step over
// all of the network's products, the floor a step cannot go below however its row passes are
// fused. ns/op is the time of one round of the five.
//
// The untrained network of the sparse and soft cells keeps its rows flat: at 3^6 about 24
// actions in support and 370 within reach of the threshold, where most of a sparse step goes to
// finding it. sparse-peaked is sparse PCL on a peaked network (see peak), whose rows keep the 1-2
// actions of a trained HalfCheetah policy.
func BenchmarkTrainStepVsGemm(b *testing.B) {
	for _, k := range []int{15625, 729} {
		for _, variant := range []string{"sparse", "soft", "sparse-peaked"} {
			b.Run(fmt.Sprintf("%s/A=%d", variant, k), func(b *testing.B) {
				fast, ref := benchVariant(b, variant, k), benchVariant(b, variant, k)
				ref.Objective().Reference = true
				segs := benchSegments(rand.New(rand.NewPCG(1, 2)), k)
				eng, err := tensor.NewEngine()
				if err != nil {
					b.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(3, 4))
				x, w, y := tensor.New(25*101, 64), tensor.New(64, k), tensor.New(25*101, k)
				dz, dw, dx := tensor.New(25*101, k), tensor.New(64, k), tensor.New(25*101, 64)
				for _, m := range []*tensor.Matrix{x, w, dz} {
					for i := range m.Data {
						m.Data[i] = float32(rng.NormFloat64())
					}
				}
				// The trunks' products: the policy's and the value network's 17 -> H -> H layers, forward
				// (x·W0, h0·W1) and backward (dW1 += h0ᵀ·d, dh0 = d·W1ᵀ, dW0 += xᵀ·dh0), twice.
				H := fast.Model.trunk[0].Out
				xin, w0, h0, w1, h1 := tensor.New(25*101, 17), tensor.New(17, H), tensor.New(25*101, H), tensor.New(H, H), tensor.New(25*101, H)
				d1, dh0, gw0, gw1 := tensor.New(25*101, H), tensor.New(25*101, H), tensor.New(17, H), tensor.New(H, H)
				for _, m := range []*tensor.Matrix{xin, w0, w1, d1} {
					for i := range m.Data {
						m.Data[i] = float32(rng.NormFloat64())
					}
				}
				var tGemm, tFast, tRef, tBack, tTrunk, cGemm, cFast, cRef, cBack, cTrunk time.Duration
				timed := func(d, c *time.Duration, f func() error) {
					c0, t0 := cputime.Process(), time.Now()
					if err := f(); err != nil {
						b.Fatal(err)
					}
					*d += time.Since(t0)
					*c += cputime.Process() - c0
				}
				gemm := func() error { return eng.MatMul(y, x, false, w, false, 1, 0) }
				// The two dense backward GEMMs of the same layer: dW += Xᵀ·dZ and dX = dZ·Wᵀ.
				back := func() error {
					if err := eng.MatMul(dw, x, true, dz, false, 1, 1); err != nil {
						return err
					}
					return eng.MatMul(dx, dz, false, w, true, 1, 0)
				}
				trunk := func() error {
					for range 2 { // the policy's trunk and the value network
						for _, p := range [][3]*tensor.Matrix{{h0, xin, w0}, {h1, h0, w1}} {
							if err := eng.MatMul(p[0], p[1], false, p[2], false, 1, 0); err != nil {
								return err
							}
						}
						if err := eng.MatMul(gw1, h0, true, d1, false, 1, 1); err != nil {
							return err
						}
						if err := eng.MatMul(dh0, d1, false, w1, true, 1, 0); err != nil {
							return err
						}
						if err := eng.MatMul(gw0, xin, true, dh0, false, 1, 1); err != nil {
							return err
						}
					}
					return nil
				}
				step := func(l *Learner) func() error {
					return func() error { _, err := l.TrainStep(segs); return err }
				}
				// One untimed round: buffers grow to size.
				for _, f := range []func() error{gemm, back, trunk, step(fast), step(ref)} {
					if err := f(); err != nil {
						b.Fatal(err)
					}
				}
				for b.Loop() {
					timed(&tGemm, &cGemm, gemm)
					timed(&tBack, &cBack, back)
					timed(&tTrunk, &cTrunk, trunk)
					timed(&tFast, &cFast, step(fast))
					timed(&tRef, &cRef, step(ref))
				}
				b.ReportMetric(float64(tFast)/float64(tGemm), "x-gemm")
				b.ReportMetric(float64(tRef)/float64(tGemm), "ref-x-gemm")
				b.ReportMetric(float64(tRef)/float64(tFast), "speedup")
				// The floor of a step with a dense logit gradient (soft PCL): the forward GEMM and
				// the two backward ones, in units of the forward GEMM, and the step against it.
				b.ReportMetric(float64(tGemm+tBack)/float64(tGemm), "floor-x-gemm")
				b.ReportMetric(float64(tFast)/float64(tGemm+tBack), "x-floor")
				n := float64(b.N)
				b.ReportMetric(float64(tGemm.Milliseconds())/n, "gemm-ms")
				b.ReportMetric(float64(tFast.Milliseconds())/n, "step-ms")
				b.ReportMetric(float64(tRef.Milliseconds())/n, "ref-step-ms")
				// The same in CPU time (all threads), which a loaded machine disturbs less.
				b.ReportMetric(float64(cFast)/float64(cGemm), "cpu-x-gemm")
				b.ReportMetric(float64(cRef)/float64(cFast), "cpu-speedup")
				b.ReportMetric(float64(cGemm+cBack)/float64(cGemm), "cpu-floor-x-gemm")
				b.ReportMetric(float64(cFast)/float64(cGemm+cBack), "cpu-x-floor")
				// The whole network's floor: the output layer's three products and the two trunks'
				// (x-net-floor: the step over them; trunk-ms: the trunks' products alone).
				b.ReportMetric(float64(tTrunk.Microseconds())/n/1000, "trunk-ms")
				b.ReportMetric(float64(tFast)/float64(tGemm+tBack+tTrunk), "x-net-floor")
				b.ReportMetric(float64(cFast)/float64(cGemm+cBack+cTrunk), "cpu-x-net-floor")
			})
		}
	}
}

// BenchmarkSampleStep times, alternately in the same run, one sampling step of n copies on the
// collector's path (one forward GEMM for all copies, then the batched draw, then the env step)
// and on the old path (the same forward, then the reference policy and policy.Sample copy by
// copy, then the env step), and reports each per env step (us-per-env-step, ref-us-per-env-step)
// and their ratio (speedup), and the collector path's process CPU time per env step
// (cpu-us-per-env-step: every thread, OpenBLAS's included), which other load on the machine
// disturbs less. The env (noiseenv.Env) costs next to nothing.
func BenchmarkSampleStep(b *testing.B) {
	for _, k := range []int{15625, 729} {
		for _, algo := range []config.Algo{config.AlgoSparse, config.AlgoSoft} {
			for _, n := range []int{1, 8} {
				b.Run(fmt.Sprintf("%s/A=%d/copies=%d", algo, k, n), func(b *testing.B) {
					benchSampleStep(b, benchLearner(b, algo, k), k, n)
				})
			}
		}
	}
}

func benchSampleStep(b *testing.B, l *Learner, k, n int) {
	ctx := context.Background()
	c, env, err := newNoiseCollector(l, k, n, 1)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	x := tensor.New(n, 17)
	p, z := make([]float32, k), make([]float32, k)
	actions := envs.NewArray(envs.Int64, n)
	it := 0
	fast := func() {
		if _, err := c.Segments(ctx, rng, 1, it); err != nil {
			b.Fatal(err)
		}
		it++
	}
	old := func() {
		for i := range x.Data {
			x.Data[i] = float32(2*rng.Float64() - 1)
		}
		heads, err := l.Model.Forward(x)
		if err != nil {
			b.Fatal(err)
		}
		var st pcl.Stats
		for i := range n {
			l.Model.Probs(p, z, heads[0].Row(i))
			actions.Ints[i] = int64(policy.Sample(p, rng))
			st.Add(p)
		}
		if _, err := env.Step(ctx, actions); err != nil {
			b.Fatal(err)
		}
	}
	fast()
	old()
	var tFast, tOld, cFast, cOld time.Duration
	for b.Loop() {
		c0, t0 := cputime.Process(), time.Now()
		fast()
		c1, t1 := cputime.Process(), time.Now()
		old()
		tFast += t1.Sub(t0)
		tOld += time.Since(t1)
		cFast += c1 - c0
		cOld += cputime.Process() - c1
	}
	steps := float64(b.N * n)
	b.ReportMetric(float64(tFast.Microseconds())/steps, "us-per-env-step")
	b.ReportMetric(float64(tOld.Microseconds())/steps, "ref-us-per-env-step")
	b.ReportMetric(float64(tOld)/float64(tFast), "speedup")
	b.ReportMetric(float64(cFast.Microseconds())/steps, "cpu-us-per-env-step")
}

// BenchmarkTrainStepPhases splits one paper-sized training step (as BenchmarkTrainStep) into its
// phases and reports the process CPU time of each in milliseconds: the forward pass with the loss
// (fwd+loss), the loss alone (loss: the objective's row passes), the backward pass (bwd), the
// Adam step (opt; TrainStep also clips), and their sum (step-cpu-ms); and the wall time of each
// (fwd+loss-ms, ..., step-ms). CPU time is what a loaded machine disturbs least; with
// OPENBLAS_NUM_THREADS=1 SPARSEPCL_WORKERS=1 it is the single-core cost. On two threads, a phase
// whose wall time is near its CPU time runs on one of them.
// sparse-peaked is sparse on a network whose output layer is scaled by 30, whose rows keep the
// support of a trained HalfCheetah policy (1-2 actions; see BenchmarkTrainStepPeaked).
func BenchmarkTrainStepPhases(b *testing.B) {
	for _, k := range []int{729, 15625} {
		for _, variant := range []string{"sparse", "soft", "sparse-peaked"} {
			b.Run(fmt.Sprintf("%s/A=%d", variant, k), func(b *testing.B) {
				l := benchVariant(b, variant, k)
				segs := benchSegments(rand.New(rand.NewPCG(1, 2)), k)
				obj := l.Objective()
				dh := make([]*tensor.Matrix, len(l.Model.Heads.Sizes))
				for i, s := range l.Model.Heads.Sizes {
					dh[i] = tensor.New(0, s)
				}
				var c, wall [4]time.Duration
				ph := func(i int, f func()) {
					c0, w0 := cputime.Process(), time.Now()
					f()
					c[i] += cputime.Process() - c0
					wall[i] += time.Since(w0)
				}
				for b.Loop() {
					ph(0, func() {
						heads, st, err := l.Model.ForwardBatch(segs)
						if err != nil {
							b.Fatal(err)
						}
						ph(1, func() {
							if _, err := obj.Evaluate(heads, st, dh); err != nil {
								b.Fatal(err)
							}
						})
					})
					ph(2, func() {
						nn.ZeroGrads(l.Params())
						if err := l.Model.Backward(dh); err != nil {
							b.Fatal(err)
						}
					})
					ph(3, func() { _ = l.Opt.Step() })
				}
				n := float64(b.N)
				for i, name := range []string{"fwd+loss", "loss", "bwd", "opt"} {
					b.ReportMetric(float64(c[i].Microseconds())/n/1000, name+"-cpu-ms")
					b.ReportMetric(float64(wall[i].Microseconds())/n/1000, name+"-ms")
				}
				b.ReportMetric(float64((c[0]+c[2]+c[3]).Microseconds())/n/1000, "step-cpu-ms")
				b.ReportMetric(float64((wall[0]+wall[2]+wall[3]).Microseconds())/n/1000, "step-ms")
			})
		}
	}
}

// BenchmarkLogitsInColumnBlocks measures what computing the output layer's logits in blocks
// that stay in cache would save (issue 22's "never materialise" route): the forward GEMM
// 2525×64 · 64×|A| written out whole, then one pass over every row for its maximum (the first
// pass of the sparsemax prefilter and of the softmax), against the same products in blocks of
// 256 rows × 512 columns (W packed by column block beforehand, as a layer doing this would keep
// it), each block's row maxima folded into running ones while the block is in cache. Both
// produce the same maxima up to rounding. whole-ms and blocked-ms are their times, alternated in
// one run; max-pass-ms is the pass alone, the most the blocks can save.
func BenchmarkLogitsInColumnBlocks(b *testing.B) {
	const rows, inner, rowBlock, colBlock = 2525, 64, 256, 512
	for _, k := range []int{15625, 729} {
		b.Run(fmt.Sprintf("A=%d", k), func(b *testing.B) {
			eng, err := tensor.NewEngine()
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(5, 6))
			x, w, y := tensor.New(rows, inner), tensor.New(inner, k), tensor.New(rows, k)
			for _, m := range []*tensor.Matrix{x, w} {
				for i := range m.Data {
					m.Data[i] = float32(rng.NormFloat64())
				}
			}
			var wBlocks []*tensor.Matrix // W's column blocks, each inner × (≤ colBlock), packed
			for c0 := 0; c0 < k; c0 += colBlock {
				c1 := min(k, c0+colBlock)
				blk := tensor.New(inner, c1-c0)
				for r := range inner {
					copy(blk.Row(r), w.Row(r)[c0:c1])
				}
				wBlocks = append(wBlocks, blk)
			}
			var xBlocks []*tensor.Matrix
			for r0 := 0; r0 < rows; r0 += rowBlock {
				r1 := min(rows, r0+rowBlock)
				blk := tensor.New(r1-r0, inner)
				copy(blk.Data, x.Data[r0*inner:r1*inner])
				xBlocks = append(xBlocks, blk)
			}
			buf := tensor.New(rowBlock, colBlock)
			maxWhole, maxBlocked := make([]float32, rows), make([]float32, rows)
			// Four running maxima, as the vectorised kernels keep lanes (the builtin max, which
			// orders NaNs, is several times slower).
			rowMax := func(r []float32) float32 {
				m0, m1, m2, m3 := r[0], r[0], r[0], r[0]
				i := 0
				for ; i+4 <= len(r); i += 4 {
					if r[i] > m0 {
						m0 = r[i]
					}
					if r[i+1] > m1 {
						m1 = r[i+1]
					}
					if r[i+2] > m2 {
						m2 = r[i+2]
					}
					if r[i+3] > m3 {
						m3 = r[i+3]
					}
				}
				for ; i < len(r); i++ {
					if r[i] > m0 {
						m0 = r[i]
					}
				}
				return max(m0, m1, m2, m3)
			}
			whole := func() (gemm time.Duration) {
				t0 := time.Now()
				if err := eng.MatMul(y, x, false, w, false, 1, 0); err != nil {
					b.Fatal(err)
				}
				gemm = time.Since(t0)
				for r := range rows {
					maxWhole[r] = rowMax(y.Row(r))
				}
				return gemm
			}
			blocked := func() {
				for bi, xb := range xBlocks {
					r0 := bi * rowBlock
					for i := range xb.Rows {
						maxBlocked[r0+i] = float32(math.Inf(-1))
					}
					for _, wb := range wBlocks {
						buf.Reshape(xb.Rows, wb.Cols)
						if err := eng.MatMul(buf, xb, false, wb, false, 1, 0); err != nil {
							b.Fatal(err)
						}
						for i := range xb.Rows {
							maxBlocked[r0+i] = max(maxBlocked[r0+i], rowMax(buf.Row(i)))
						}
					}
				}
			}
			whole()
			blocked()
			var tWhole, tGemm, tBlocked time.Duration
			for b.Loop() {
				t0 := time.Now()
				tGemm += whole()
				t1 := time.Now()
				blocked()
				tBlocked += time.Since(t1)
				tWhole += t1.Sub(t0)
			}
			// OpenBLAS sums a product of other shapes in another order, so the maxima agree to
			// rounding, not bit for bit.
			for r := range rows {
				if d := math.Abs(float64(maxWhole[r] - maxBlocked[r])); d > 1e-5*math.Max(1, math.Abs(float64(maxWhole[r]))) {
					b.Fatalf("row %d: maximum %v whole, %v in blocks", r, maxWhole[r], maxBlocked[r])
				}
			}
			n := float64(b.N) * 1e6
			b.ReportMetric(float64(tWhole.Nanoseconds())/n, "whole-ms")
			b.ReportMetric(float64(tBlocked.Nanoseconds())/n, "blocked-ms")
			b.ReportMetric(float64((tWhole-tGemm).Nanoseconds())/n, "max-pass-ms")
			b.ReportMetric(float64(tBlocked)/float64(tWhole), "blocked-x-whole")
		})
	}
}

// BenchmarkTrainStepPeaked times, alternately in the same run, the sparse training step on the
// untrained network of the other benchmarks and on one whose output layer is scaled by 30, and
// the bare forward GEMM of the output layer. An untrained network keeps hundreds of actions within
// 1 of its best logit, so the logits' gradient is nearly dense and the step runs dense backward
// GEMMs; the scaled network's support (support, the mean over the batch's rows) is about what
// trained HalfCheetah policies keep (1-2 actions, docs/results/halfcheetah-paper), where the
// backward pass is sparse. untrained-ms and peaked-ms are the two steps, peaked-x-gemm the
// peaked step over the GEMM; the cpu- metrics are the same in process CPU time.
func BenchmarkTrainStepPeaked(b *testing.B) {
	for _, k := range []int{729, 15625} {
		b.Run(fmt.Sprintf("A=%d", k), func(b *testing.B) {
			untrained, peaked := benchVariant(b, "sparse", k), benchVariant(b, "sparse-peaked", k)
			segs := benchSegments(rand.New(rand.NewPCG(1, 2)), k)
			heads, _, err := peaked.Model.ForwardBatch(segs)
			if err != nil {
				b.Fatal(err)
			}
			p, z := make([]float32, k), make([]float32, k)
			support := 0
			for r := range heads[0].Rows {
				peaked.Model.Probs(p, z, heads[0].Row(r))
				for _, q := range p {
					if q > 0 {
						support++
					}
				}
			}
			meanSupport := float64(support) / float64(heads[0].Rows)

			eng, err := tensor.NewEngine()
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			x, wg, y := tensor.New(25*101, 64), tensor.New(64, k), tensor.New(25*101, k)
			for _, m := range []*tensor.Matrix{x, wg} {
				for i := range m.Data {
					m.Data[i] = float32(rng.NormFloat64())
				}
			}
			var t, c [3]time.Duration
			run := []func() error{
				func() error { return eng.MatMul(y, x, false, wg, false, 1, 0) },
				func() error { _, err := untrained.TrainStep(segs); return err },
				func() error { _, err := peaked.TrainStep(segs); return err },
			}
			for _, f := range run { // one untimed round: buffers grow to size
				if err := f(); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				for i, f := range run {
					c0, t0 := cputime.Process(), time.Now()
					if err := f(); err != nil {
						b.Fatal(err)
					}
					t[i] += time.Since(t0)
					c[i] += cputime.Process() - c0
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(t[0].Microseconds())/n/1000, "gemm-ms")
			b.ReportMetric(float64(t[1].Microseconds())/n/1000, "untrained-ms")
			b.ReportMetric(float64(t[2].Microseconds())/n/1000, "peaked-ms")
			b.ReportMetric(float64(t[2])/float64(t[0]), "peaked-x-gemm")
			b.ReportMetric(float64(c[1].Microseconds())/n/1000, "cpu-untrained-ms")
			b.ReportMetric(float64(c[2].Microseconds())/n/1000, "cpu-peaked-ms")
			b.ReportMetric(float64(c[2])/float64(c[0]), "cpu-peaked-x-gemm")
			b.ReportMetric(meanSupport, "support")
		})
	}
}

// BenchmarkTrainStepLevers measures issue 51's levers side by side in one run: a training step at
// 3^6 and 5^6 (separate form) plain, with a lagged target network (one more forward pass) and with
// a trust region (the lagged policy's shifts too), and prints each as a ratio to the plain step.
func BenchmarkTrainStepLevers(b *testing.B) {
	for _, k := range []int{729, 15625} {
		for _, algo := range []config.Algo{config.AlgoSparse, config.AlgoSoft} {
			b.Run(fmt.Sprintf("%s/A=%d", algo, k), func(b *testing.B) {
				segs := benchSegments(rand.New(rand.NewPCG(1, 2)), k)
				learner := func(lag, lambda float64) *Learner {
					return benchLearnerWith(b, algo, k, func(c *config.Config) { c.TargetLag, c.TrustRegion = lag, lambda })
				}
				arms := []*Learner{learner(0, 0), learner(0.9, 0), learner(0.9, 0.01)}
				var took [3]time.Duration
				for b.Loop() {
					for i, l := range arms {
						t0 := time.Now()
						if _, err := l.TrainStep(segs); err != nil {
							b.Fatal(err)
						}
						took[i] += time.Since(t0)
					}
				}
				n := float64(b.N)
				b.ReportMetric(float64(took[0].Microseconds())/n/1000, "plain-ms")
				b.ReportMetric(float64(took[1])/float64(took[0]), "lag-x-plain")
				b.ReportMetric(float64(took[2])/float64(took[0]), "trust-x-plain")
			})
		}
	}
}

// BenchmarkTrainStepFused times the evaluated default's training step (25 × 100 steps, the lagged
// network with its trust region, the separate form) unfused and with the fused output layer
// (cfg.FusedOutput), alternated step by step in one run, phase by phase through Learner.Phase:
// unfused lagged (the lagged network's whole forward and the trust region's shifts), forward,
// loss, backward; fused lagged (the lagged trunk alone), trunk, blocks (every block's lagged and
// online logits, policy, consistencies and output-layer backward, on all cores), backward (the
// lanes' gradients summed, the trunk's backward); both: opt (clip, Adam, the lagged update).
// "-peaked" starts the logit layer 30 times larger (cfg.LogitInitScale), online and lagged, so
// that the rows keep the support of a trained policy. fused-x is the fused step's wall time over
// the unfused one's, fused-cpu-x the same in process CPU time (every thread), the ratio to read
// on a loaded machine.
func BenchmarkTrainStepFused(b *testing.B) {
	for _, k := range []int{729, 15625} {
		for _, variant := range []string{"sparse", "soft", "sparse-peaked"} {
			b.Run(fmt.Sprintf("%s/A=%d", variant, k), func(b *testing.B) {
				segs := benchSegments(rand.New(rand.NewPCG(1, 2)), k)
				type timed struct {
					l         *Learner
					cpu, wall map[string]time.Duration
					c0        time.Duration
					w0        time.Time
				}
				mk := func(fused bool) *timed {
					l := benchLearnerWith(b, config.Algo(strings.TrimSuffix(variant, "-peaked")), k, func(c *config.Config) {
						c.TargetLag, c.TrustRegion, c.FusedOutput = 0.9, 0.01, fused
						if strings.HasSuffix(variant, "-peaked") {
							c.LogitInitScale = 30
						}
					})
					t := &timed{l: l, cpu: map[string]time.Duration{}, wall: map[string]time.Duration{}}
					l.Phase = func(name string) {
						c, w := cputime.Process(), time.Now()
						t.cpu[name] += c - t.c0
						t.wall[name] += w.Sub(t.w0)
						t.c0, t.w0 = c, w
					}
					return t
				}
				runs := []*timed{mk(false), mk(true)}
				for b.Loop() {
					for _, t := range runs {
						t.c0, t.w0 = cputime.Process(), time.Now()
						if _, err := t.l.TrainStep(segs); err != nil {
							b.Fatal(err)
						}
						t.cpu["opt"] += cputime.Process() - t.c0
						t.wall["opt"] += time.Since(t.w0)
					}
				}
				n := float64(b.N)
				ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / n / 1000 }
				var steps, cpus [2]time.Duration
				for i, t := range runs {
					name := [2]string{"unfused", "fused"}[i]
					for phase, w := range t.wall {
						b.ReportMetric(ms(w), name+"-"+phase+"-ms")
						b.ReportMetric(ms(t.cpu[phase]), name+"-"+phase+"-cpu-ms")
						steps[i] += w
						cpus[i] += t.cpu[phase]
					}
					b.ReportMetric(ms(steps[i]), name+"-step-ms")
					b.ReportMetric(ms(cpus[i]), name+"-step-cpu-ms")
				}
				b.ReportMetric(float64(steps[1])/float64(steps[0]), "fused-x")
				b.ReportMetric(float64(cpus[1])/float64(cpus[0]), "fused-cpu-x")
			})
		}
	}
}
