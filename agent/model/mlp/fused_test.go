package mlp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// fusedCase is a learner of the fused-output tests: its algorithm, grid size, sharpening and
// whether it has the default levers (a lagged network with the trust region).
type fusedCase struct {
	algo   config.Algo
	k      int
	by     float32
	levers bool
}

func (c fusedCase) String() string {
	return fmt.Sprintf("%s/K=%d/sharpen=%v/levers=%v", c.algo, c.k, c.by, c.levers)
}

func fusedCases() []fusedCase {
	var cs []fusedCase
	for _, k := range []int{729, 15625} {
		for _, algo := range []config.Algo{config.AlgoSparse, config.AlgoSoft} {
			for _, by := range []float32{1, 60} {
				for _, levers := range []bool{false, true} {
					cs = append(cs, fusedCase{algo, k, by, levers})
				}
			}
		}
	}
	return cs
}

// learner builds the case's learner on eng, fused or not, with blocks of perBlock segments and
// workers goroutines; its online parameters are moved off the lagged ones, so that the trust
// region's shifts and the bootstrap values are not the online network's.
func (c fusedCase) learner(t *testing.T, eng *tensor.Engine, fused bool, perBlock, workers int) *Learner {
	t.Helper()
	cfg := testConfig(c.algo, config.FormSeparate, 7)
	cfg.Alpha = 0.1
	if c.levers {
		cfg.TargetLag, cfg.TrustRegion = 0.9, 0.01
	}
	cfg.FusedOutput = fused
	l, err := NewLearner(cfg, testDim, c.k, eng)
	if err != nil {
		t.Fatal(err)
	}
	sharpen(l, c.by)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, p := range l.Params() {
		for i := range p.Value.Data {
			p.Value.Data[i] += 0.05 * float32(rng.NormFloat64())
		}
	}
	l.FusedBlock = perBlock
	l.Objective().Workers = workers
	return l
}

// engines are the engines the fused tests run on: pure Go, and OpenBLAS when it loads.
func engines(t *testing.T) map[string]*tensor.Engine {
	es := map[string]*tensor.Engine{"gonum": tensor.GonumEngine()}
	if e, err := tensor.OpenBLASEngine(); err == nil {
		es["openblas"] = e
	} else {
		t.Logf("OpenBLAS not tested: %v", err)
	}
	return es
}

// The fused output layer gives the loss and the parameter gradients of the unfused step within
// 1e-5 relative (per parameter, in norm), on both engines, for sparse and soft PCL at both grids,
// flat and peaked logits, with and without the lagged network and its trust region; V and the
// step terms it leaves for the diagnostics are the unfused step's too, bit for bit under the
// pure-Go engine (each row's logits are summed in the same order; TestFusedRowsPaperSize checks
// it at the paper's batch).
func TestFusedMatchesUnfused(t *testing.T) {
	for engName, eng := range engines(t) {
		for _, c := range fusedCases() {
			name := engName + "/" + c.String()
			segs := fastSegments(rand.New(rand.NewPCG(uint64(c.k), 9)), 11, c.k)
			plain, fused := c.learner(t, eng, false, 0, 2), c.learner(t, eng, true, 3, 2)
			want, err := plain.Loss(segs, true)
			if err != nil {
				t.Fatal(err)
			}
			got, err := fused.Loss(segs, true)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got.Loss-want.Loss) > 1e-5*math.Abs(want.Loss) || got.Steps != want.Steps || got.Episodes != want.Episodes {
				t.Errorf("%s: loss %v (%d steps, %d episodes), unfused %v (%d, %d)", name, got.Loss, got.Steps, got.Episodes, want.Loss, want.Steps, want.Episodes)
			}
			pureGo := engName == "gonum"
			for row := range (5 + 1) * len(segs) {
				gv, wv := fused.Objective().Value(row), plain.Objective().Value(row)
				if gv != wv && (pureGo || math.Abs(gv-wv) > 1e-5*math.Max(1, math.Abs(wv))) {
					t.Fatalf("%s: V at row %d: %v, unfused %v", name, row, gv, wv)
				}
				if row < 5*len(segs) {
					gt, wt := fused.Objective().Term(row), plain.Objective().Term(row)
					if gt != wt && (pureGo || math.Abs(gt-wt) > 1e-5*math.Max(1, math.Abs(wt))) {
						t.Fatalf("%s: step term at row %d: %v, unfused %v", name, row, gt, wt)
					}
				}
			}
			compareGrads(t, name, fused, plain, 1e-5)
		}
	}
}

// The fused step's bits do not depend on the number of goroutines: the lanes and their order of
// summation are fixed.
func TestFusedIndependentOfWorkers(t *testing.T) {
	for engName, eng := range engines(t) {
		for _, c := range []fusedCase{{config.AlgoSparse, 729, 1, true}, {config.AlgoSoft, 15625, 1, true}, {config.AlgoSparse, 15625, 60, true}} {
			segs := fastSegments(rand.New(rand.NewPCG(5, 6)), 13, c.k)
			var first []float32
			var firstLoss float64
			for _, workers := range []int{1, 2, 5} {
				l := c.learner(t, eng, true, 2, workers)
				info, err := l.Loss(segs, true)
				if err != nil {
					t.Fatal(err)
				}
				var grads []float32
				for _, p := range l.Params() {
					grads = append(grads, p.Grad.Data...)
				}
				if first == nil {
					first, firstLoss = grads, info.Loss
					continue
				}
				if info.Loss != firstLoss {
					t.Errorf("%s/%s: %d workers: loss %v, 1 worker %v", engName, c, workers, info.Loss, firstLoss)
				}
				for i := range grads {
					if grads[i] != first[i] {
						t.Errorf("%s/%s: %d workers: gradient entry %d is %v, 1 worker %v", engName, c, workers, i, grads[i], first[i])
						break
					}
				}
			}
		}
	}
}

// compareGrads checks every parameter's gradient of got against want's, relative in the Euclidean
// norm: the trunk's entries are sums over |A| logits whose gradient sums to zero (soft), so single
// entries carry the cancellation of float32 rounding in both paths alike.
func compareGrads(t *testing.T, name string, got, want *Learner, tol float64) {
	t.Helper()
	for j, p := range got.Params() {
		q := want.Params()[j]
		var dd, nn float64
		for e, v := range q.Grad.Data {
			d := float64(p.Grad.Data[e] - v)
			dd += d * d
			nn += float64(v) * float64(v)
		}
		if math.Sqrt(dd) > tol*math.Sqrt(nn) {
			t.Errorf("%s: %s: relative difference %.3g (norm %.3g)", name, p.Name, math.Sqrt(dd/nn), math.Sqrt(nn))
		}
	}
}

// At the paper's batch (25 sub-episodes of 100 steps, the 2 x 64 network, 3^6) under the pure-Go
// engine, the fused step's V and step terms are the unfused step's bit for bit, and its gradients
// are within rounding: pure Go's sgemm sums a block's dx = dy·Wᵀ (101-707 rows) with its serial
// kernel and the batch's with its parallel one, and dW over the rows block by block, so the
// parameters' bits differ.
func TestFusedRowsPaperSize(t *testing.T) {
	for _, algo := range []config.Algo{config.AlgoSparse, config.AlgoSoft} {
		segs := benchSegments(rand.New(rand.NewPCG(1, 2)), 729)
		mk := func(fused bool) *Learner {
			cfg := config.Default()
			cfg.Net, cfg.Algo, cfg.Alpha, cfg.Gamma = config.NetMLP, algo, 0.1, 0.99
			cfg.TargetLag, cfg.TrustRegion, cfg.FusedOutput = 0.9, 0.01, fused
			l, err := NewLearner(cfg, 17, 729, tensor.GonumEngine())
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
		plain, fused := mk(false), mk(true)
		want, err := plain.Loss(segs, true)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fused.Loss(segs, true)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got.Loss-want.Loss) > 1e-9*math.Abs(want.Loss) {
			t.Errorf("%s: loss %v, unfused %v", algo, got.Loss, want.Loss)
		}
		for row := range 101 * 25 {
			if g, w := fused.Objective().Value(row), plain.Objective().Value(row); g != w {
				t.Fatalf("%s: V at row %d: %v, unfused %v", algo, row, g, w)
			}
			if row < 100*25 {
				if g, w := fused.Objective().Term(row), plain.Objective().Term(row); g != w {
					t.Fatalf("%s: step term at row %d: %v, unfused %v", algo, row, g, w)
				}
			}
		}
		compareGrads(t, string(algo), fused, plain, 1e-5)
	}
}
