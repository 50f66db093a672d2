package lstm

import (
	"fmt"
	"math"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/nn/nntest"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// TestProjectedTrainingChoice: the projected input path is chosen for the
// paper's shapes and left for the direct one when it would not pay (huge
// vocabulary, many features for a narrow embedding, few rows); the test
// switch overrides the choice both ways.
func TestProjectedTrainingChoice(t *testing.T) {
	for _, tc := range []struct {
		name   string
		vocabs []int
		embed  int
		rows   int
		want   bool
	}{
		{"paper shapes", []int{6, 3, 3, 6}, 128, 20 * 400, true},
		{"huge vocabulary", []int{5000, 3}, 128, 20 * 400, false},
		{"vocabulary just fits", []int{99}, 128, 200, true},
		{"vocabulary just too big", []int{100}, 128, 200, false},
		{"many features, narrow embedding", []int{2, 2, 2, 2, 2, 2, 2, 2}, 16, 8000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := NewNet(NetConfig{InputVocabs: tc.vocabs, Hidden: 8, EmbedDim: tc.embed, HeadSizes: []int{2},
				Seed: 1, Engine: tensor.GonumEngine()})
			if err != nil {
				t.Fatal(err)
			}
			if got := n.projectedTraining(tc.rows); got != tc.want {
				t.Fatalf("projectedTraining(%d) = %v, want %v", tc.rows, got, tc.want)
			}
			n.trainInput = projectedInput
			if !n.projectedTraining(tc.rows) {
				t.Fatal("forced projected input not taken")
			}
			n.trainInput = directInput
			if n.projectedTraining(tc.rows) {
				t.Fatal("forced direct input not taken")
			}
		})
	}
}

// TestProjectedInputMatchesDirect: Forward and Backward through projected
// tables equal the direct path (embedding sums, x·Wx gemm, dx gemm,
// embedding scatter) to float32 tolerance: outputs and every parameter
// gradient, on a masked batch whose head gradients are nonzero on inactive
// rows too, over two steps with a parameter update in between (the tables
// must not be stale). The automatic choice runs too and must match both.
func TestProjectedInputMatchesDirect(t *testing.T) {
	type netCase struct {
		name     string
		vocabs   []int
		embed, H int
		T, B     int
		autoProj bool // what the automatic choice must pick
		short    bool // every sequence ends before T: trailing steps have no active rows
	}
	nets := []netCase{
		{"small vocabularies", []int{6, 3, 3, 6}, 24, 32, 6, 40, true, false},
		{"huge vocabulary", []int{3000, 3}, 24, 16, 3, 10, false, false},
		// B*H above parallelMinCells: the cells run on the worker pool and
		// the table gradient is summed from per-worker partials.
		{"pooled rows", []int{6, 3, 3, 6}, 24, 64, 3, parallelMinCells/64 + 13, true, false},
		{"all shorter than T", []int{6, 3, 3, 6}, 24, 32, 6, 40, true, true},
	}
	engines := map[string]*tensor.Engine{"gonum": tensor.GonumEngine(), "default": defaultEngine(t)}
	for _, nc := range nets {
		for ename, eng := range engines {
			for _, pureGo := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/pureGo=%v", nc.name, ename, pureGo), func(t *testing.T) {
					compareInputPaths(t, nc.vocabs, nc.embed, nc.H, nc.T, nc.B, nc.autoProj, nc.short, eng, pureGo)
				})
			}
		}
	}
}

func compareInputPaths(t *testing.T, vocabs []int, embed, H, T, B int, autoProj, short bool, eng *tensor.Engine, pureGo bool) {
	F := len(vocabs)
	mk := func(path inputPath) *Net {
		n, err := NewNet(NetConfig{InputVocabs: vocabs, Hidden: H, EmbedDim: embed, HeadSizes: []int{7, 1},
			StateHeads: []bool{false, true}, Seed: 5, EmbedStd: 0.5, Engine: eng})
		if err != nil {
			t.Fatal(err)
		}
		n.trainInput = path
		n.setPureGo(pureGo)
		return n
	}
	paths := []inputPath{directInput, projectedInput, autoInput}
	nets := []*Net{mk(directInput), mk(projectedInput), mk(autoInput)}
	rng := nn.NewRand(21, 0)
	// Nonzero biases so the bias rows of the projection matter.
	for _, p := range nets[0].Params() {
		if p.Name == "embed.bias" || p.Name == "lstm.b" || p.Name == "head1.W" {
			nntest.RandFill(p.Value, rng, 0.5)
		}
	}
	sync := func() {
		for _, n := range nets[1:] {
			for i, p := range n.Params() {
				copy(p.Value.Data, nets[0].Params()[i].Value.Data)
			}
		}
	}
	sync()
	lengths := make([]int, B)
	for b := range lengths {
		lengths[b] = 1 + rng.IntN(T)
	}
	lengths[0] = T
	if short {
		for b := range lengths {
			lengths[b] = 1 + rng.IntN(T-2)
		}
	}
	tokens := make([]int32, T*B*F)
	for i := range tokens {
		tokens[i] = int32(rng.IntN(vocabs[i%F]))
	}
	dHeads := []*tensor.Matrix{nntest.RandFill(tensor.New(T*B, 7), rng, 1), nntest.RandFill(tensor.New(T*B, 1), rng, 1)}
	var worst float64
	for update := 0; update < 2; update++ {
		if update > 0 {
			for _, p := range nets[0].Params() {
				for i := range p.Value.Data {
					p.Value.Data[i] += float32(rng.NormFloat64() * 0.05)
				}
			}
			sync()
		}
		var outs [][]*tensor.Matrix
		for i, n := range nets {
			nn.ZeroGrads(n.Params())
			o, err := n.Forward(tokens, T, B, lengths)
			if err != nil {
				t.Fatal(err)
			}
			wantProj := paths[i] == projectedInput || paths[i] == autoInput && autoProj
			if n.projected != wantProj {
				t.Fatalf("path %d: forward used projected input %v, want %v", paths[i], n.projected, wantProj)
			}
			if err := n.Backward(dHeads); err != nil {
				t.Fatal(err)
			}
			outs = append(outs, []*tensor.Matrix{o[0].Clone(), o[1].Clone()})
		}
		for i := 1; i < len(nets); i++ {
			for h := range outs[0] {
				worst = math.Max(worst, checkClose(t, fmt.Sprintf("update %d path %d head %d output", update, paths[i], h), outs[i][h], outs[0][h], 1e-5))
			}
			for k, p := range nets[i].Params() {
				want := nets[0].Params()[k].Grad
				if want.SumSquares() == 0 {
					t.Fatalf("%s: zero gradient, the comparison would be vacuous", p.Name)
				}
				worst = math.Max(worst, checkClose(t, fmt.Sprintf("update %d path %d %s gradient", update, paths[i], p.Name), p.Grad, want, 1e-4))
			}
		}
	}
	t.Logf("worst relative difference %.3g", worst)
}

// checkClose fails unless |got-want| <= tol·max(1, max|want|) elementwise,
// and returns the largest difference relative to that scale.
func checkClose(t *testing.T, what string, got, want *tensor.Matrix, tol float64) float64 {
	t.Helper()
	scale := 1.0
	for _, v := range want.Data {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	var worst float64
	for i, v := range got.Data {
		d := math.Abs(float64(v-want.Data[i])) / scale
		if d > tol {
			t.Fatalf("%s[%d] = %v, want %v (relative difference %.3g > %g)", what, i, v, want.Data[i], d, tol)
		}
		worst = math.Max(worst, d)
	}
	return worst
}

// TestPackingOrder: packed rows go by step, longest sequences first (ties
// in batch order), and pack/unpack move exactly the active rows.
func TestPackingOrder(t *testing.T) {
	for _, tc := range []struct {
		name       string
		T          int
		lengths    []int
		perm, rows []int
	}{
		{"ragged", 3, []int{3, 1, 2, 3}, []int{0, 3, 2, 1}, []int{4, 3, 2}},
		{"all full", 2, []int{2, 2}, []int{0, 1}, []int{2, 2}},
		{"all length 1", 3, []int{1, 1, 1}, []int{0, 1, 2}, []int{3, 0, 0}},
		{"single sequence", 4, []int{4}, []int{0}, []int{1, 1, 1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p packing
			B := len(tc.lengths)
			p.build(tc.T, B, tc.lengths)
			if fmt.Sprint(p.perm) != fmt.Sprint(tc.perm) || fmt.Sprint(p.rows) != fmt.Sprint(tc.rows) {
				t.Fatalf("perm %v rows %v, want %v %v", p.perm, p.rows, tc.perm, tc.rows)
			}
			N := 0
			for _, l := range tc.lengths {
				N += l
			}
			if p.off[tc.T] != N {
				t.Fatalf("off[T] = %d, want Σ lengths = %d", p.off[tc.T], N)
			}
			// Row t*B+b holds the value 100*t+b (+1 so zero means untouched).
			src := tensor.New(tc.T*B, 1)
			for r := range src.Data {
				src.Data[r] = float32(100*(r/B) + r%B + 1)
			}
			packed := tensor.New(N, 1)
			p.pack(packed, src)
			for tt := 0; tt < tc.T; tt++ {
				for i := 0; i < p.rows[tt]; i++ {
					if got, want := packed.Data[p.off[tt]+i], float32(100*tt+p.perm[i]+1); got != want {
						t.Fatalf("packed row (t=%d, i=%d) = %v, want %v", tt, i, got, want)
					}
				}
			}
			back := tensor.New(tc.T*B, 1)
			p.unpack(back, packed)
			for r, v := range back.Data {
				want := float32(0)
				if r/B < tc.lengths[r%B] {
					want = src.Data[r]
				}
				if v != want {
					t.Fatalf("unpacked row %d = %v, want %v", r, v, want)
				}
			}
		})
	}
}
