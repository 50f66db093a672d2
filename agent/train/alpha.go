package train

import (
	"fmt"
	"log/slog"
	"math"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/weight"
)

// alphaLearner is what the weight control needs of a learner.
type alphaLearner interface {
	Alpha() float64
	SetAlpha(alpha float64) error
}

// alphaControl is a run's regularisation weight over its iterations (fixed, scheduled or
// automatic) and its collapse check.
type alphaControl struct {
	ctrl  weight.Controller
	auto  *weight.Auto // the automatic weight's state, nil otherwise
	check *weight.CollapseCheck
	algo  config.Algo
	log   *slog.Logger
	name  func(field string) string // names a config field in the warning (Options.FieldName)
}

// newAlphaControl builds the weight control of cfg (a validated config). The collapse check's
// stretch is a twentieth of the run's iterations, at least 50.
func newAlphaControl(cfg config.Config, log *slog.Logger, name func(field string) string) (*alphaControl, error) {
	a := &alphaControl{ctrl: weight.Fixed(cfg.Alpha), algo: cfg.Algo, log: log, name: name}
	switch cfg.WeightMode() {
	case config.WeightLearned:
		auto, err := weight.NewAuto(weight.DefaultAuto(cfg.Alpha))
		if err != nil {
			return nil, fmt.Errorf("automatic alpha: %w", err)
		}
		a.ctrl, a.auto = auto, auto
	case config.WeightSchedule:
		d, err := weight.NewDecay(cfg.AlphaStart, cfg.AlphaDecay, cfg.Alpha)
		if err != nil {
			return nil, fmt.Errorf("alpha schedule: %w", err)
		}
		a.ctrl = d
	}
	check, err := newCollapseCheck(cfg)
	if err != nil {
		return nil, err
	}
	a.check = check
	return a, nil
}

// newCollapseCheck is the collapse check of a run of cfg: over a twentieth of its iterations, at
// least 50, against its reward threshold.
func newCollapseCheck(cfg config.Config) (*weight.CollapseCheck, error) {
	threshold := cfg.RewardThreshold
	if cfg.NoThreshold {
		threshold = math.NaN()
	}
	return weight.NewCollapseCheck(max(50, cfg.Iters/20), threshold)
}

// CollapseOf replays over a run's metrics the collapse check its training runs, and returns the
// warning it gives and at which iteration: the check's verdict on a finished run, or on one
// trained before the check was as it is now.
func CollapseOf(cfg config.Config, rows []runstore.Row) (w weight.Collapse, iteration int, ok bool, err error) {
	check, err := newCollapseCheck(cfg)
	if err != nil {
		return weight.Collapse{}, 0, false, err
	}
	for _, r := range rows {
		if w, ok := check.Observe(collapsePoint(r)); ok {
			return w, r.Iteration, true, nil
		}
	}
	return weight.Collapse{}, 0, false, nil
}

// collapsePoint is what the collapse check reads of a row.
func collapsePoint(r runstore.Row) weight.Point {
	return weight.Point{Iteration: r.Iteration, Support: r.Support, MaxProb: r.MaxProb, Return: r.MeanReward}
}

// apply sets the weight of iteration it on l, from the max-prob its policy sampled with. A fixed
// weight never calls SetAlpha, so such runs stay bit for bit what they were before weights moved.
func (a *alphaControl) apply(it int, maxProb float64, l alphaLearner) error {
	alpha := a.ctrl.Alpha(it, weight.Stats{MaxProb: maxProb})
	if alpha == l.Alpha() {
		return nil
	}
	if err := l.SetAlpha(alpha); err != nil {
		return fmt.Errorf("iteration %d: %w", it, err)
	}
	return nil
}

// restore puts a resumed run's automatic weight back where its checkpoint left it.
func (a *alphaControl) restore(st *weight.AutoState, l alphaLearner) error {
	if a.auto == nil || st == nil {
		return nil
	}
	if err := a.auto.SetState(*st); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return l.SetAlpha(a.auto.Current())
}

// state is what a checkpoint saves of the weight (nil unless it is automatic).
func (a *alphaControl) state() *weight.AutoState {
	if a.auto == nil {
		return nil
	}
	st := a.auto.State()
	return &st
}

// observe feeds a finished row to the collapse check and warns, once, when it fires.
func (a *alphaControl) observe(r runstore.Row) {
	w, ok := a.check.Observe(collapsePoint(r))
	if !ok {
		return
	}
	lever := fmt.Sprintf("try a larger %s (3x or more) or %s", a.name("alpha"), a.name("alpha_auto"))
	if a.algo != config.AlgoSoft {
		lever = "at a one-action support sparsemax passes no gradient to the logits in that state, so only training elsewhere moves it; " + lever
	}
	a.log.Warn("policy collapsed: "+w.String()+"; "+lever, "iteration", r.Iteration, "onset", w.Onset,
		"support", w.Support, "max_prob", w.MaxProb, "return", w.ReturnNow, "alpha", r.Alpha)
}
