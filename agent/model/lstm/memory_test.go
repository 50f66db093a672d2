package lstm_test

import (
	"math"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/episode"
	"github.com/sparsepcl/sparsepcl/agent/model/lstm"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// additionModel is the LSTM of ReversedAddition at base 3 (|A| = 24), small and with embeddings
// wide enough that one token's effect is far above float rounding.
func additionModel(t *testing.T) *lstm.Model {
	t.Helper()
	cfg := config.Default()
	cfg.Env, cfg.Base, cfg.Hidden, cfg.EmbedStd = "ReversedAddition-v0", 3, 16, 0.5
	m, err := lstm.New(cfg, lstm.Spec{ObsVocab: 4, ActionComponents: []int{4, 2, 3}}, tensor.GonumEngine())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// additionEpisode is a zig-zag over two columns (digits 2,1 then 0,2), as the expert plays it.
func additionEpisode() *episode.Episode {
	down, right, up := int32(3), int32(1), int32(2)
	write := func(move, char int32) int32 { return move + 4 + 8*char }
	return &episode.Episode{
		Obs:        []int32{2, 1, 2, 0, 3},
		Actions:    []int32{down, write(right, 0), up, write(right, 0)},
		Rewards:    []float64{0, 1, 0, 1},
		Terminated: true,
	}
}

func rowDiff(a, b []float32) float64 {
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

// TestStateReachesDecision: a step's logits depend on the observations and actions of the steps
// before it, in replay re-evaluation (ForwardBatch) and in sampling (Actor, step by step, with
// the same values), and the gradient of a late step's logits reaches the embedding of the first
// step's observation. ReversedAddition's write needs exactly this: the digit read a step earlier
// and the carry from a column before.
func TestStateReachesDecision(t *testing.T) {
	m := additionModel(t)
	base := additionEpisode()
	obsChanged := additionEpisode()
	obsChanged.Obs[0] = 0 // the first digit read
	actChanged := additionEpisode()
	actChanged.Actions[1] = 1 + 4 + 8*2 // the first write: another char
	heads, steps, err := m.ForwardBatch([]*episode.Episode{base, obsChanged, actChanged})
	if err != nil {
		t.Fatal(err)
	}
	B := steps.B
	logits := func(b, step int) []float32 { return heads[0].Row(step*B + b) }
	for step := 1; step < base.Len(); step++ {
		if d := rowDiff(logits(0, step), logits(1, step)); d < 1e-4 {
			t.Errorf("step %d: logits move by %g when the observation of step 0 changes: the state does not carry it", step, d)
		}
	}
	if d := rowDiff(logits(0, 1), logits(2, 1)); d != 0 {
		t.Errorf("step 1 changed by %g when the action of step 1 changed: a step sees its own action", d)
	}
	for step := 2; step < base.Len(); step++ {
		if d := rowDiff(logits(0, step), logits(2, step)); d < 1e-4 {
			t.Errorf("step %d: logits move by %g when the action of step 1 changes", step, d)
		}
	}

	// Sampling: the actor carries the same state from step to step.
	env, err := registry.MakeVec("ReversedAddition-v0", 1, map[string]any{"base": 3, "autoreset": "disabled"})
	if err != nil {
		t.Fatal(err)
	}
	actor, err := m.NewActor(env)
	if err != nil {
		t.Fatal(err)
	}
	actor.Begin([]bool{true})
	prev := int32(-1)
	for step := range base.Len() {
		got, err := actor.Act([]int32{base.Obs[step]}, []int32{prev})
		if err != nil {
			t.Fatal(err)
		}
		if d := rowDiff(got.Row(0), logits(0, step)); d > 1e-5 {
			t.Errorf("step %d: the actor's logits differ from replay re-evaluation by %g", step, d)
		}
		prev = base.Actions[step]
	}

	// The gradient of the last step's logits reaches the first observation's embedding row.
	if _, _, err := m.ForwardBatch([]*episode.Episode{base}); err != nil {
		t.Fatal(err)
	}
	d := make([]*tensor.Matrix, len(m.Sizes))
	for i, s := range m.Sizes {
		d[i] = tensor.New(base.Len()+1, s)
	}
	last := base.Len() - 1
	for j := range d[0].Cols {
		d[0].Row(last)[j] = float32(j%5) - 2
	}
	for _, p := range m.Params() {
		p.Grad.Zero()
	}
	if err := m.Backward(d); err != nil {
		t.Fatal(err)
	}
	var obsTable *tensor.Matrix
	for _, p := range m.Params() {
		if p.Name == "embed.table0" {
			obsTable = p.Grad
		}
	}
	if obsTable == nil {
		t.Fatal("no observation embedding table embed.table0 among the parameters")
	}
	// Digit 1 is read only at step 1, three steps before the last.
	g := 0.0
	for _, v := range obsTable.Row(1) {
		g = max(g, math.Abs(float64(v)))
	}
	if g < 1e-6 {
		t.Errorf("the gradient of step %d's logits does not reach the embedding of digit 1 read at step 1 (max |grad| %g)", last, g)
	}
}
