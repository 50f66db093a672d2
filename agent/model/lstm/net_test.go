package lstm

import (
	"math"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// TestStepMatchesForward: stepping a batch one token at a time gives the
// same head outputs as the full-sequence Forward, on every active row, on
// both backends.
func TestStepMatchesForward(t *testing.T) {
	engines := map[string]*tensor.Engine{"gonum": tensor.GonumEngine(), "default": defaultEngine(t)}
	for name, eng := range engines {
		t.Run(name, func(t *testing.T) {
			n, err := NewNet(NetConfig{InputVocabs: []int{6, 3, 3, 6}, Hidden: 32, HeadSizes: []int{20, 1},
				StateHeads: []bool{false, true}, Seed: 3, EmbedStd: 0.3, Engine: eng})
			if err != nil {
				t.Fatal(err)
			}
			const T, B, F = 7, 5, 4
			rng := nn.NewRand(1, 1)
			lengths := []int{7, 3, 1, 6, 7}
			tokens := make([]int32, T*B*F)
			for i := range tokens {
				tokens[i] = int32(rng.IntN(n.cfg.InputVocabs[i%F]))
			}
			outs, err := n.Forward(tokens, T, B, lengths)
			if err != nil {
				t.Fatal(err)
			}
			st := n.NewState(B)
			heads := []*tensor.Matrix{tensor.New(B, 20), tensor.New(B, 1)}
			maxDiff := stepForwardMaxDiff(t, n, st, tokens, T, B, F, lengths, heads, outs)
			// The same float32 operations in the same order; a BLAS may block
			// a B-row and a T*B-row product differently, hence not exact zero.
			if maxDiff > 1e-6 {
				t.Fatalf("step and forward differ by %g", maxDiff)
			}
			t.Logf("max |step - forward| = %g", maxDiff)
		})
	}
}

func TestStepStateReset(t *testing.T) {
	n, err := NewNet(NetConfig{InputVocabs: []int{4}, Hidden: 8, HeadSizes: []int{3}, Seed: 1, Engine: tensor.GonumEngine()})
	if err != nil {
		t.Fatal(err)
	}
	st := n.NewState(2)
	out := []*tensor.Matrix{tensor.New(2, 3)}
	first := tensor.New(2, 3)
	for i := 0; i < 3; i++ {
		if err := n.Step(st, []int32{1, 1}, out); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			_ = first.CopyFrom(out[0])
		}
	}
	if err := st.Reset(0); err != nil {
		t.Fatal(err)
	}
	if err := n.Step(st, []int32{1, 1}, out); err != nil {
		t.Fatal(err)
	}
	if out[0].At(0, 0) != first.At(0, 0) || out[0].At(1, 0) == first.At(1, 0) {
		t.Fatalf("reset row should restart, the other should not: %v vs %v", out[0].Data, first.Data)
	}
	if err := st.Reset(2); err == nil {
		t.Fatal("reset out of range accepted")
	}
}

func TestBadInputs(t *testing.T) {
	eng := tensor.GonumEngine()
	n, err := NewNet(NetConfig{InputVocabs: []int{4, 3}, Hidden: 8, HeadSizes: []int{5, 1}, Seed: 1, Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	good := make([]int32, 2*3*2) // T=2, B=3, F=2
	st := n.NewState(3)
	heads := []*tensor.Matrix{tensor.New(3, 5), tensor.New(3, 1)}
	lin, _ := nn.NewLinear(eng, "lin", 3, 2, true, nn.NewRand(1, 1))
	lstm, _ := newLayer(eng, "lstm", 3, 4, nn.NewRand(1, 1))
	cases := []struct {
		name    string
		run     func() error
		wantSub string
	}{
		{"config no heads", func() error { _, err := NewNet(NetConfig{InputVocabs: []int{2}, Hidden: 4}); return err }, "no heads"},
		{"config bad vocab", func() error {
			_, err := NewNet(NetConfig{InputVocabs: []int{2, 0}, Hidden: 4, HeadSizes: []int{1}, Engine: eng})
			return err
		}, "feature 1"},
		{"config state flags", func() error {
			_, err := NewNet(NetConfig{InputVocabs: []int{2}, Hidden: 4, HeadSizes: []int{1}, StateHeads: []bool{true, false}, Engine: eng})
			return err
		}, "StateHeads"},
		{"token count", func() error { _, err := n.Forward(good[:11], 2, 3, []int{2, 2, 2}); return err }, "11 tokens"},
		{"token range", func() error {
			bad := append([]int32(nil), good...)
			bad[2*3+1] = 3
			_, err := n.Forward(bad, 2, 3, []int{2, 2, 2})
			return err
		}, "row 3 feature 1: token 3"},
		{"negative token", func() error {
			bad := append([]int32(nil), good...)
			bad[0] = -1
			_, err := n.Forward(bad, 2, 3, []int{2, 2, 2})
			return err
		}, "token -1"},
		{"length too long", func() error { _, err := n.Forward(good, 2, 3, []int{2, 3, 2}); return err }, "lengths[1] = 3"},
		{"length zero", func() error { _, err := n.Forward(good, 2, 3, []int{2, 0, 2}); return err }, "lengths[1] = 0"},
		{"lengths count", func() error { _, err := n.Forward(good, 2, 3, []int{2, 2}); return err }, "2 lengths"},
		{"backward head count", func() error {
			if _, err := n.Forward(good, 2, 3, []int{2, 2, 2}); err != nil {
				return err
			}
			return n.Backward([]*tensor.Matrix{tensor.New(6, 5)})
		}, "1 head gradients"},
		{"backward head shape", func() error {
			if _, err := n.Forward(good, 2, 3, []int{2, 2, 2}); err != nil {
				return err
			}
			return n.Backward([]*tensor.Matrix{tensor.New(6, 5), tensor.New(6, 2)})
		}, "6x2, want 6x1"},
		{"step tokens", func() error { return n.Step(st, good[:5], heads) }, "5 tokens"},
		{"step head shape", func() error { return n.Step(st, good[:6], []*tensor.Matrix{tensor.New(3, 4), heads[1]}) }, "3x4, want 3x5"},
		{"step foreign state", func() error { return n.Step(&State{B: 3, H: tensor.New(3, 7)}, good[:6], heads) }, "3x7"},
		{"linear input", func() error { _, err := lin.Forward(tensor.New(2, 4)); return err }, "2x4"},
		{"linear dy", func() error {
			if _, err := lin.Forward(tensor.New(2, 3)); err != nil {
				return err
			}
			return lin.Backward(tensor.New(2, 3), nil, false)
		}, "2x3, want 2x2"},
		{"lstm input", func() error { _, _, err := lstm.Forward(tensor.New(5, 3), 2, 3, []int{1, 1, 1}); return err }, "5x3, want 6x3"},
		{"lstm backward before forward", func() error { _, err := lstm.Backward(tensor.New(1, 4), nil); return err }, "before Forward"},
		{"mlp sizes", func() error { _, err := nn.NewMLP(eng, "m", []int{3}, true, nn.NewRand(1, 1)); return err }, "at least"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if err == nil || !strings.Contains(err.Error(), tc.wantSub) {
				t.Fatalf("got %v, want an error containing %q", err, tc.wantSub)
			}
		})
	}
}

// stepForwardMaxDiff steps st through the T time-major steps of tokens and returns the largest
// absolute difference between the Step heads and Forward's outputs outs on the active rows.
func stepForwardMaxDiff(t *testing.T, n *Net, st *State, tokens []int32, T, B, F int, lengths []int, heads, outs []*tensor.Matrix) float64 {
	t.Helper()
	var maxDiff float64
	for step := 0; step < T; step++ {
		if err := n.Step(st, tokens[step*B*F:(step+1)*B*F], heads); err != nil {
			t.Fatal(err)
		}
		for h := range heads {
			for b := 0; b < B; b++ {
				if step >= lengths[b] {
					continue
				}
				for j, v := range heads[h].Row(b) {
					maxDiff = math.Max(maxDiff, math.Abs(float64(v-outs[h].At(step*B+b, j))))
				}
			}
		}
	}
	return maxDiff
}
