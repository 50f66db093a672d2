package pcl

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// fastCase is a batch of random heads and steps at K actions: rows of flat logits (an untrained
// network: the whole row is within 1 of its maximum), of spread ones (a few candidates) and of
// sharp ones, in every combination of step and bootstrap row, padded sequences included.
func fastCase(rng *rand.Rand, h *Heads, K int) ([]*tensor.Matrix, Steps) {
	T, B := 4, 3
	s := Steps{T: T, B: B, Lengths: []int{4, 1, 3}, Terminated: []bool{false, true, false},
		Actions: make([]int32, T*B), Rewards: make([]float64, T*B)}
	heads := make([]*tensor.Matrix, len(h.Sizes))
	for i, n := range h.Sizes {
		heads[i] = tensor.New((T+1)*B, n)
	}
	for r := range (T + 1) * B {
		sd := []float64{0.05, 1, 8}[r%3]
		if h.Unified {
			sd *= h.Alpha
		}
		row := heads[0].Row(r)
		for j := range row {
			row[j] = float32(sd * rng.NormFloat64())
		}
		for i := 1; i < len(heads); i++ {
			heads[i].Data[r] = float32(rng.NormFloat64())
		}
	}
	for i := range s.Actions {
		s.Actions[i] = int32(rng.IntN(K))
		if i%4 == 0 {
			s.Actions[i] = int32(maxIndex(heads[0].Row(i))) // on the support
		}
		s.Rewards[i] = rng.NormFloat64()
	}
	return heads, s
}

func maxIndex(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// The fast path's loss and gradients equal the reference path's within 1e-5 relative, for every
// algorithm and form at the long-episode grids' action counts, with any number of workers, and
// with head 0's gradient written out or given to a sink: sparse PCL's as sparse rows, soft PCL's
// as row factors on the exponentials. The reference path leaves the row-factor sink empty.
func TestFastPathMatchesReference(t *testing.T) {
	type algoForm struct {
		algo config.Algo
		form config.Form
	}
	var cases []algoForm
	for _, a := range []config.Algo{config.AlgoSoft, config.AlgoSparse, config.AlgoTsallis} {
		for _, f := range []config.Form{config.FormSeparate, config.FormUnified} {
			cases = append(cases, algoForm{a, f})
		}
	}
	for _, K := range []int{729, 15625} {
		for ci, c := range cases {
			for _, run := range []struct {
				workers int
				sink    bool
			}{{1, true}, {3, true}, {1, false}} {
				workers := run.workers
				name := fmt.Sprintf("%s/%s/K=%d/workers=%d/sink=%v", c.algo, c.form, K, workers, run.sink)
				cfg := testConfig(c.algo, c.form)
				cfg.Alpha = 0.1
				h, err := NewHeads(cfg.LearnerConfig, K)
				if err != nil {
					t.Fatal(err)
				}
				heads, s := fastCase(rand.New(rand.NewPCG(uint64(K), uint64(ci))), &h, K)
				var sink nn.SparseRows
				var scaled nn.RowScaled
				if run.sink && h.TakesScaledGrad() {
					h.ScaledGrad = &scaled
					scaled.Reset(1) // the reference path must empty it
				}
				ref := NewObjective(cfg.LearnerConfig, &h)
				ref.Reference = true
				want := make([]*tensor.Matrix, len(heads))
				for i := range want {
					want[i] = tensor.New(0, 1)
				}
				wantLoss, err := ref.Evaluate(heads, s, want)
				if err != nil {
					t.Fatal(err)
				}
				if scaled.Rows() != 0 {
					t.Fatalf("%s: the reference path left %d rows of factors", name, scaled.Rows())
				}
				if run.sink && h.TakesSparseGrad() {
					h.SparseGrad = &sink
				}
				fast := NewObjective(cfg.LearnerConfig, &h)
				fast.Workers = workers
				got := make([]*tensor.Matrix, len(heads))
				for i := range got {
					got[i] = tensor.New(0, 1)
				}
				loss, err := fast.Evaluate(heads, s, got)
				if err != nil {
					t.Fatal(err)
				}
				h.SparseGrad, h.ScaledGrad = nil, nil
				if math.Abs(loss-wantLoss) > 1e-5*math.Abs(wantLoss) {
					t.Errorf("%s: loss %v, reference %v", name, loss, wantLoss)
				}
				if got[0].Rows == 0 {
					if sink.Rows != heads[0].Rows {
						t.Fatalf("%s: dHeads[0] left empty, sparse rows %dx%d", name, sink.Rows, sink.Cols)
					}
					got[0].Reshape(sink.Rows, sink.Cols)
					if err := sink.ToDense(got[0]); err != nil {
						t.Fatal(err)
					}
				}
				if h.TakesScaledGrad() && run.sink {
					if scaled.Rows() != heads[0].Rows {
						t.Fatalf("%s: %d rows of factors for %d rows", name, scaled.Rows(), heads[0].Rows)
					}
					dense := tensor.New(got[0].Rows, got[0].Cols)
					if err := scaled.ToDense(got[0], dense); err != nil {
						t.Fatal(err)
					}
					got[0] = dense
				}
				for i := range want {
					compareRel(t, fmt.Sprintf("%s: dHeads[%d]", name, i), got[i], want[i], 1e-5)
				}
			}
		}
	}
}

// compareRel checks got against want entry by entry, relative to the entry and, for entries
// far below the largest, to 1e-6 of the largest (float32 rounding of a sum that cancels).
func compareRel(t *testing.T, name string, got, want *tensor.Matrix, tol float64) {
	t.Helper()
	if got.Rows != want.Rows || got.Cols != want.Cols {
		t.Fatalf("%s: shape %s, want %s", name, got.Shape(), want.Shape())
	}
	var big float64
	for _, v := range want.Data {
		big = math.Max(big, math.Abs(float64(v)))
	}
	bad := 0
	for k, v := range want.Data {
		d := math.Abs(float64(got.Data[k]) - float64(v))
		if d > tol*(math.Abs(float64(v))+1e-6*big) {
			if bad < 3 {
				t.Errorf("%s[%d,%d]: %v, reference %v", name, k/want.Cols, k%want.Cols, got.Data[k], v)
			}
			bad++
		}
	}
	if bad > 3 {
		t.Errorf("%s: %d entries differ", name, bad)
	}
}

// The fast path's loss and gradients are bit for bit the same whatever the number of workers.
func TestFastPathIndependentOfWorkers(t *testing.T) {
	for ci, algo := range []config.Algo{config.AlgoSoft, config.AlgoSparse, config.AlgoTsallis} {
		for _, form := range []config.Form{config.FormSeparate, config.FormUnified} {
			cfg := testConfig(algo, form)
			cfg.Alpha = 0.1
			const K = 729
			h, err := NewHeads(cfg.LearnerConfig, K)
			if err != nil {
				t.Fatal(err)
			}
			heads, s := fastCase(rand.New(rand.NewPCG(7, uint64(ci))), &h, K)
			var first []*tensor.Matrix
			var firstLoss float64
			for _, workers := range []int{1, 2, 5} {
				o := NewObjective(cfg.LearnerConfig, &h)
				o.Workers = workers
				d := make([]*tensor.Matrix, len(heads))
				for i := range d {
					d[i] = tensor.New(0, 1)
				}
				loss, err := o.Evaluate(heads, s, d)
				if err != nil {
					t.Fatal(err)
				}
				if first == nil {
					first, firstLoss = d, loss
					continue
				}
				if loss != firstLoss {
					t.Errorf("%s/%s: loss %v with %d workers, %v with 1", algo, form, loss, workers, firstLoss)
				}
				for i := range d {
					for k, v := range d[i].Data {
						if v != first[i].Data[k] {
							t.Fatalf("%s/%s: dHeads[%d][%d] = %v with %d workers, %v with 1", algo, form, i, k, v, workers, first[i].Data[k])
						}
					}
				}
			}
		}
	}
}

// rowFactor's factor and shift give c1·softmax + c2·onehot(a) from the exponentials (e·inv is the
// softmax), and it refuses where no factor can: f zero with c2 not, or c2/f beyond float32.
func TestRowFactor(t *testing.T) {
	e := []float32{1, 0.5, 0.25, 0.125}
	var sum float32
	for _, v := range e {
		sum += v
	}
	inv := 1 / sum
	cases := []struct {
		name   string
		c1, c2 float64
		ok     bool
	}{
		{"separate form", 0.3, -0.3, true},
		{"unified form", 0.3 + 0.7, -0.3, true},
		{"no step weight", 0.7, 0, true},
		{"nothing", 0, 0, true},
		{"dV cancels", 0, -0.3, false},
		{"factor far below the entry", 1e-40, -1, false},
	}
	const a = 2
	for _, c := range cases {
		f, shift, ok := rowFactor(c.c1, inv, c.c2)
		if ok != c.ok {
			t.Fatalf("%s: ok %v, want %v", c.name, ok, c.ok)
		}
		if !ok {
			continue
		}
		for j, v := range e {
			if j == a {
				v += shift
			}
			want := c.c1 * float64(e[j]*inv)
			if j == a {
				want += c.c2
			}
			if got := float64(f * v); math.Abs(got-want) > 1e-6*(1+math.Abs(want)) {
				t.Errorf("%s: entry %d = %v, want %v", c.name, j, got, want)
			}
		}
	}
}
