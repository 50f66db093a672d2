package train

import (
	"context"
	"log/slog"
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// surplusWatcher computes, before the on-policy step of the first iteration, the surpluses of the
// fresh episodes under the parameters they were sampled with, and after that iteration reads the
// replay's distribution (the buffer then holds exactly that batch, in its order).
type surplusWatcher struct {
	NopObserver
	run         Watched
	want, probs []float64
}

func (w *surplusWatcher) Start(_ context.Context, run Watched) error {
	w.run = run
	return nil
}

func (w *surplusWatcher) BeforeStep(s Step) error {
	if s.Iteration != 0 || s.Kind != OnPolicyStep {
		return nil
	}
	if _, err := w.run.Learner.Loss(s.Batch, false); err != nil {
		return err
	}
	w.want = w.run.Learner.Objective().Surpluses(nil)
	return nil
}

func (w *surplusWatcher) Trained(it int) error {
	if it == 0 {
		w.probs = w.run.Replay.Probabilities()
	}
	return nil
}

// With replay priority "advantage", each fresh episode is stored with its surplus over the V it
// was sampled under (before the iteration's steps): the replay's distribution is the softmax of
// those surpluses, episode by episode. The reward priority gives another distribution.
func TestAdvantagePriorityStoresSurpluses(t *testing.T) {
	for _, prio := range []config.Priority{config.PriorityAdvantage, config.PriorityReward} {
		cfg := smallEpisodesConfig()
		cfg.Iters, cfg.EvalEvery, cfg.ReplayPriority, cfg.ReplayUniform = 1, 0, prio, 0
		w := &surplusWatcher{}
		if _, err := Run(context.Background(), cfg, Options{Registry: registry.Default(), Dir: t.TempDir(),
			Logger: slog.New(slog.DiscardHandler), Observer: w}); err != nil {
			t.Fatal(err)
		}
		if len(w.probs) != cfg.BatchSize || len(w.want) != cfg.BatchSize {
			t.Fatalf("%s: %d stored, %d surpluses, want %d each", prio, len(w.probs), len(w.want), cfg.BatchSize)
		}
		want := make([]float64, len(w.want))
		mx := floats.Max(w.want)
		for i, s := range w.want {
			want[i] = math.Exp(cfg.ReplayAlpha * (s - mx))
		}
		floats.Scale(1/floats.Sum(want), want)
		ok := floats.EqualApprox(w.probs, want, 1e-9)
		if ok != (prio == config.PriorityAdvantage) {
			t.Errorf("priority %s: replay distribution %v, softmax of the surpluses %v (match %v)", prio, w.probs, want, ok)
		}
	}
}
