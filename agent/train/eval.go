package train

import (
	"context"
	"errors"
	"fmt"

	"github.com/sparsepcl/sparsepcl/agent/collect"
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/model/lstm"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
)

// evaluator is a run's checkpoint loaded for greedy evaluation on n env copies.
type evaluator struct {
	cfg     config.Config
	meta    runstore.Meta
	env     envs.VecEnv
	sampler *collect.Collector[int32]
}

func loadEvaluator(dir string, reg *envs.Registry, eng *tensor.Engine, n int) (*evaluator, error) {
	cfg, err := runstore.Dir(dir).Config()
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	env, err := MakeEnv(reg, cfg, n)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	ev := &evaluator{cfg: cfg, env: env}
	if err := ev.load(dir, eng); err != nil {
		return nil, errors.Join(err, env.Close())
	}
	return ev, nil
}

func (ev *evaluator) load(dir string, eng *tensor.Engine) error {
	spec, err := lstm.SpecOf(ev.env)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	if eng == nil {
		if eng, err = tensor.NewEngine(); err != nil {
			return fmt.Errorf("eval: %w", err)
		}
	}
	l, err := lstm.NewLearner(ev.cfg, spec, eng)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	if ev.meta, err = LoadCheckpoint(dir, l); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	if ev.sampler, err = l.Model.NewCollector(ev.env, ev.cfg.MaxSteps); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	return nil
}

func (ev *evaluator) sample(ctx context.Context, seed int64) (collect.Batch[int32], error) {
	res, err := ev.sampler.Episodes(ctx, nil, collect.Greedy, ev.meta.Iteration, seed)
	if err != nil {
		return res, fmt.Errorf("eval: %w", err)
	}
	return res, nil
}

// Evaluate loads a run directory's checkpoint and returns the mean greedy reward over n episodes
// on a fresh env (its curriculum, if any, at the start), as a new process would see it.
func Evaluate(ctx context.Context, dir string, reg *envs.Registry, eng *tensor.Engine, n int, seed int64) (_ float64, _ runstore.Meta, err error) {
	ev, err := loadEvaluator(dir, reg, eng, n)
	if err != nil {
		return 0, runstore.Meta{}, err
	}
	defer closeKeepingErr(&err, ev.env)
	res, err := ev.sample(ctx, seed)
	if err != nil {
		return 0, runstore.Meta{}, err
	}
	return res.MeanReturn(), ev.meta, nil
}

// LengthResult is the greedy performance at one curriculum level.
type LengthResult struct {
	MinLength  int     // curriculum min_length: the inputs have min_length + {0, 1, 2} symbols
	Episodes   int     // episodes played
	MeanReward float64 // mean total reward
	MeanTarget float64 // mean len(target), the largest possible total reward
	Solved     float64 // fraction of episodes that earned the whole target (shortfall >= 0)
}

// Fraction is the mean reward as a fraction of the largest possible (the mean target length).
func (r LengthResult) Fraction() float64 {
	if r.MeanTarget == 0 {
		return 0
	}
	return r.MeanReward / r.MeanTarget
}

// levelEnv is a VecEnv whose curriculum can be set, with the target length of each copy's episode.
type levelEnv interface {
	algorithmic.CurriculumEnv
	TargetLength(i int) int
}

func (ev *evaluator) levels() (levelEnv, error) {
	cur, ok := ev.env.(levelEnv)
	if !ok {
		return nil, fmt.Errorf("eval: %s has no curriculum to evaluate per length", ev.cfg.Env)
	}
	return cur, nil
}

// atLevel plays the evaluator's n copies greedily with the curriculum set to min_length m. The
// seed depends on m only, so a level's figure is the same whichever function measured it.
func (ev *evaluator) atLevel(ctx context.Context, cur levelEnv, m int, seed int64) (LengthResult, error) {
	fresh := cur.CurriculumState()
	s := fresh
	s.Curricula = make([]algorithmic.CurriculumState, len(fresh.Curricula))
	for i := range s.Curricula {
		s.Curricula[i] = algorithmic.CurriculumState{MinLength: m}
	}
	n := ev.env.NumEnvs()
	s.Pending = make([]*float64, n) // a fresh batch: its reset records nothing
	if err := cur.RestoreCurriculum(s); err != nil {
		return LengthResult{}, fmt.Errorf("eval: min_length %d: %w", m, err)
	}
	res, err := ev.sample(ctx, seed+int64(m)*1_000_003)
	if err != nil {
		return LengthResult{}, fmt.Errorf("eval: min_length %d: %w", m, err)
	}
	r := LengthResult{MinLength: m, Episodes: n, MeanReward: res.MeanReturn()}
	for i, e := range res.Trajectories {
		L := float64(cur.TargetLength(i))
		r.MeanTarget += L / float64(n)
		if e.TotalReward() >= L {
			r.Solved += 1 / float64(n)
		}
	}
	return r, nil
}

// ErrNoCurriculum marks a run whose env has no curriculum, so it has no trained level.
var ErrNoCurriculum = errors.New("the run's env has no curriculum")

// EvaluateTrained loads a run directory's checkpoint and plays n greedy episodes at the curriculum
// level its training had reached (runstore.Meta.TrainedLevel), the figure that says how good the trained
// policy is. Its result equals EvaluateLengths' row of that level.
func EvaluateTrained(ctx context.Context, dir string, reg *envs.Registry, eng *tensor.Engine, n int, seed int64) (_ LengthResult, _ runstore.Meta, err error) {
	ev, err := loadEvaluator(dir, reg, eng, n)
	if err != nil {
		return LengthResult{}, runstore.Meta{}, err
	}
	defer closeKeepingErr(&err, ev.env)
	level, ok := ev.meta.TrainedLevel()
	if !ok {
		return LengthResult{}, runstore.Meta{}, fmt.Errorf("eval: %s: %w", dir, ErrNoCurriculum)
	}
	cur, err := ev.levels()
	if err != nil {
		return LengthResult{}, runstore.Meta{}, err
	}
	r, err := ev.atLevel(ctx, cur, level, seed)
	if err != nil {
		return LengthResult{}, runstore.Meta{}, err
	}
	return r, ev.meta, nil
}

// EvaluateLengths loads a run directory's checkpoint and plays n greedy episodes at each curriculum
// min_length from the task's start up to algorithmic.MaxMinLength, which shows how far the policy
// generalises beyond the level training reached. The env must have a curriculum.
func EvaluateLengths(ctx context.Context, dir string, reg *envs.Registry, eng *tensor.Engine, n int, seed int64) (_ []LengthResult, _ runstore.Meta, err error) {
	ev, err := loadEvaluator(dir, reg, eng, n)
	if err != nil {
		return nil, runstore.Meta{}, err
	}
	defer closeKeepingErr(&err, ev.env)
	cur, err := ev.levels()
	if err != nil {
		return nil, runstore.Meta{}, err
	}
	var out []LengthResult
	for m := cur.CurriculumState().Curricula[0].MinLength; m <= algorithmic.MaxMinLength; m++ {
		r, err := ev.atLevel(ctx, cur, m, seed)
		if err != nil {
			return nil, runstore.Meta{}, err
		}
		out = append(out, r)
	}
	return out, ev.meta, nil
}
