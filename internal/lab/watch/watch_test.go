package watch

import (
	"context"
	"math"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/model/lstm"
	"github.com/sparsepcl/sparsepcl/agent/policy"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// trainedRun trains a few iterations of sparse PCL on Copy base 3 into a temporary directory.
func trainedRun(t *testing.T) string {
	t.Helper()
	cfg := config.Default()
	cfg.Env, cfg.Base, cfg.Algo, cfg.Alpha = "Copy-v0", 3, config.AlgoSparse, 0.05
	cfg.BatchSize, cfg.Hidden, cfg.Iters, cfg.EvalEvery, cfg.Seed = 16, 16, 3, 0, 2
	dir := t.TempDir()
	if _, err := train.Run(context.Background(), cfg, train.Options{Dir: dir, Registry: registry.Default(), Engine: tensor.GonumEngine()}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The player carries the LSTM state from step to step: its greedy actions and their
// probabilities are those of one batch forward pass over the whole episode.
func TestPlayerStepsAsTheBatchForward(t *testing.T) {
	dir := trainedRun(t)
	pl, err := Open(dir, registry.Default(), tensor.GonumEngine())
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	if err := pl.Reset(2, nil, []int64{2, 0, 1}); err != nil {
		t.Fatal(err)
	}
	obs := []int32{pl.obs}
	var steps []Step
	for {
		st, err := pl.Step()
		if err != nil {
			t.Fatal(err)
		}
		steps = append(steps, st)
		obs = append(obs, pl.obs)
		if st.Done {
			break
		}
	}
	if _, err := pl.Step(); err == nil {
		t.Fatal("a step after the episode ended was accepted")
	}
	if limit := 3 + 3 + 4 + 1; len(steps) > limit { // gym ends an episode once time exceeds the limit
		t.Fatalf("%d steps, more than Copy allows (%d)", len(steps), limit)
	}

	// Replay the episode's inputs through a fresh learner loaded from the same checkpoint.
	l, err := lstm.NewLearner(pl.Config, pl.model.Spec, tensor.GonumEngine())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := train.LoadCheckpoint(dir, l); err != nil {
		t.Fatal(err)
	}
	spec := l.Model.Spec
	F, T := spec.Features(), len(steps)
	tokens := make([]int32, T*F)
	for i := range T {
		tokens[i*F] = obs[i]
		prev := -1
		if i > 0 {
			prev = steps[i-1].Action
		}
		spec.PrevActionTokens(tokens[i*F+1:(i+1)*F], prev)
	}
	heads, err := l.Model.Net.Forward(tokens, T, 1, []int{T})
	if err != nil {
		t.Fatal(err)
	}
	K := spec.NumActions()
	p, z := make([]float32, K), make([]float32, K)
	ret := 0.0
	for i, st := range steps {
		l.Model.Probs(p, z, heads[0].Row(i))
		if a := policy.Greedy(z, nil); a != st.Action {
			t.Fatalf("step %d: player took %d, the batch forward's greedy action is %d", i, st.Action, a)
		}
		if math.Abs(float64(p[st.Action])-st.Prob) > 1e-5 || st.Prob <= 0 || st.Support < 1 || st.Support > K {
			t.Fatalf("step %d: prob %v support %d, batch forward prob %v", i, st.Prob, st.Support, p[st.Action])
		}
		ret += st.Reward
		if st.Return != ret {
			t.Fatalf("step %d: return %v, sum of rewards %v", i, st.Return, ret)
		}
		if len(st.Digits) != 3 || st.Digits[0] > 1 || st.Digits[1] > 1 || st.Digits[2] > 2 {
			t.Fatalf("step %d: digits %v of action %d", i, st.Digits, st.Action)
		}
	}
}

func TestPlayerBadInput(t *testing.T) {
	dir := trainedRun(t)
	pl, err := Open(dir, registry.Default(), tensor.GonumEngine())
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	if _, err := pl.Step(); err == nil {
		t.Error("a step before any reset was accepted")
	}
	for _, tc := range []struct {
		name  string
		level int
		input any
	}{
		{"level below the task's start", 0, nil},
		{"level above the top", 31, nil},
		{"symbol out of the base", 2, []int64{1, 7}},
	} {
		if err := pl.Reset(tc.level, nil, tc.input); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	if _, err := Open(t.TempDir(), registry.Default(), nil); err == nil {
		t.Error("a directory without a run was accepted")
	}
}
