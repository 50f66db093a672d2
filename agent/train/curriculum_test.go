package train

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// Before a greedy evaluation the evaluation env takes a copy of the training curriculum: the one
// shared state, or per copy training copy i mod batch's; its own earlier state is discarded, it
// records nothing pending, and the training env is left as it was.
func TestSyncEvalCurriculum(t *testing.T) {
	start := algorithmic.Copy.StartMinLength()
	cases := []struct {
		name       string
		curriculum config.Curriculum
		train      []int // training min_length per curriculum
		want       []int // evaluation min_length per copy
	}{
		{"shared", config.CurriculumShared, []int{start + 5}, []int{start + 5, start + 5, start + 5, start + 5, start + 5, start + 5}},
		{"per-copy", config.CurriculumPerCopy, []int{start + 1, start + 3, start + 5, start + 7}, []int{start + 1, start + 3, start + 5, start + 7, start + 1, start + 3}},
	}
	reg := registry.Default()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := smallCopyConfig(config.AlgoSparse, 0.05)
			cfg.Curriculum = tc.curriculum
			trainEnv, err := MakeEnv(reg, cfg, 4)
			if err != nil {
				t.Fatal(err)
			}
			evalEnv, err := MakeEnv(reg, cfg, 6)
			if err != nil {
				t.Fatal(err)
			}
			tv, ev := trainEnv.(*algorithmic.VecEnv), evalEnv.(*algorithmic.VecEnv)
			ts := tv.CurriculumState()
			pending := -1.0
			for i := range ts.Curricula {
				ts.Curricula[i] = algorithmic.CurriculumState{MinLength: tc.train[i], Shortfalls: []float64{-1, 0}}
			}
			for i := range ts.Pending {
				ts.Pending[i] = &pending
			}
			if err := tv.RestoreCurriculum(ts); err != nil {
				t.Fatal(err)
			}
			// The evaluation env's own history (a higher level, pending shortfalls) must not survive.
			es := ev.CurriculumState()
			for i := range es.Curricula {
				es.Curricula[i] = algorithmic.CurriculumState{MinLength: algorithmic.MaxMinLength}
			}
			for i := range es.Pending {
				es.Pending[i] = &pending
			}
			if err := ev.RestoreCurriculum(es); err != nil {
				t.Fatal(err)
			}
			before, _ := json.Marshal(tv.CurriculumState())
			if err := algorithmic.SyncCurriculum(evalEnv, trainEnv); err != nil {
				t.Fatal(err)
			}
			after, _ := json.Marshal(tv.CurriculumState())
			if string(before) != string(after) {
				t.Errorf("training curriculum changed:\nbefore %s\nafter  %s", before, after)
			}
			got := ev.CurriculumState()
			for i, w := range tc.want {
				if m := ev.MinLength(i); m != w {
					t.Errorf("evaluation copy %d at min_length %d, want %d", i, m, w)
				}
				if got.Pending[i] != nil {
					t.Errorf("evaluation copy %d has a pending shortfall %v, want none", i, *got.Pending[i])
				}
			}
			for i, c := range got.Curricula {
				if len(c.Shortfalls) != 2 {
					t.Errorf("evaluation curriculum %d has shortfalls %v, want the training curriculum's", i, c.Shortfalls)
				}
			}
		})
	}
}

// The greedy evaluation does not feed back into training: the training columns of metrics.csv are
// bit for bit the same with an evaluation every iteration and with none, through curriculum
// level-ups (the evaluation's random streams are separate from training's).
func TestEvaluationDoesNotAffectTraining(t *testing.T) {
	reg := registry.Default()
	runs := map[int][]runstore.Row{}
	for _, every := range []int{1, 0} {
		cfg := resumeConfig()
		cfg.EvalEvery = every
		sum, err := Run(context.Background(), cfg, Options{Dir: t.TempDir(), Registry: reg, Engine: tensor.GonumEngine()})
		if err != nil {
			t.Fatal(err)
		}
		runs[every] = sum.Rows
	}
	evaluated, plain := runs[1], runs[0]
	if len(evaluated) == 0 || evaluated[0].Curriculum == evaluated[len(evaluated)-1].Curriculum {
		t.Fatalf("the curriculum must level up during the run to exercise the copy (retune resumeConfig)")
	}
	for i, r := range evaluated {
		if math.IsNaN(r.GreedyReward) {
			t.Fatalf("eval-every 1: iteration %d has no greedy reward", i)
		}
		if !math.IsNaN(plain[i].GreedyReward) {
			t.Fatalf("eval-every 0: iteration %d has a greedy reward", i)
		}
	}
	if len(plain) != len(evaluated) {
		t.Fatalf("%d rows with evaluation, %d without", len(evaluated), len(plain))
	}
	for i := range plain {
		a, b := evaluated[i], plain[i]
		a.GreedyReward, b.GreedyReward, a.WallSeconds, b.WallSeconds = 0, 0, 0, 0
		if fmt.Sprintf("%#v", a) != fmt.Sprintf("%#v", b) {
			t.Fatalf("iteration %d: training columns differ:\nwith evaluation    %+v\nwithout evaluation %+v", i, a, b)
		}
	}
}
