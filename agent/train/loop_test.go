package train

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
)

// fakeRegime records the loop's calls, to check the order of an iteration's phases.
type fakeRegime struct {
	after bool
	calls []string
	alpha float64
}

func (f *fakeRegime) Alpha() float64           { return f.alpha }
func (f *fakeRegime) SetAlpha(a float64) error { f.alpha = a; return nil }
func (f *fakeRegime) Close() error             { return nil }

func (f *fakeRegime) start(context.Context, bool) (runstore.Meta, *runstore.Checkpoints, profile, error) {
	return runstore.Meta{}, runstore.Dir("").NewCheckpoints(), profile{evalAfter: f.after}, nil
}

func (f *fakeRegime) sample(_ context.Context, _ int, row *runstore.Row) (int, error) {
	f.calls = append(f.calls, "sample")
	row.MaxProb = 0.5
	return 3, nil
}

func (f *fakeRegime) train(int, *runstore.Row) (string, error) {
	f.calls = append(f.calls, "train")
	return "", nil
}

func (f *fakeRegime) evaluate(context.Context, int) (float64, error) {
	f.calls = append(f.calls, "evaluate")
	return 7, nil
}

func (f *fakeRegime) save(cp *runstore.Checkpoints, meta runstore.Meta) error {
	f.calls = append(f.calls, "save")
	return nil
}

// TestLoopOrder checks that one loop keeps each regime's order: the MLP regime evaluates the
// policy that sampled the iteration (before training), the LSTM regime the trained one; only
// iterations on the evaluation schedule evaluate, and a checkpoint follows the iteration's row.
func TestLoopOrder(t *testing.T) {
	tests := []struct {
		name  string
		after bool
		want  string
	}{
		{"evaluate before training (mlp)", false,
			"sample evaluate train sample train save sample evaluate train save"},
		{"evaluate after training (lstm)", true,
			"sample train evaluate sample train save sample train evaluate save"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Iters, cfg.EvalEvery, cfg.CheckpointEvery = 3, 2, 2
			reg := &fakeRegime{after: tc.after}
			sum, err := run(context.Background(), cfg, Options{Dir: t.TempDir()}, reg)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(reg.calls, " "); got != tc.want {
				t.Errorf("calls\n got %s\nwant %s", got, tc.want)
			}
			greedy := make([]float64, len(sum.Rows))
			for i, r := range sum.Rows {
				greedy[i] = r.GreedyReward
			}
			if sum.Iterations != 3 || sum.LastGreedy != 7 || greedy[0] != 7 || greedy[2] != 7 || !math.IsNaN(greedy[1]) {
				t.Errorf("iterations %d, last greedy %v, greedy column %v: want 3, 7, [7 NaN 7]", sum.Iterations, sum.LastGreedy, greedy)
			}
			if n := sum.Rows[2].EnvSteps; n != 9 {
				t.Errorf("env steps after 3 iterations: %d, want 9", n)
			}
		})
	}
}
