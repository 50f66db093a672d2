package algorithmic

import (
	"context"
	"fmt"

	"github.com/sparsepcl/sparsepcl/envs"
)

// VecEnv is N copies of a task stepped as one batch. Observations are an Int64 Array of shape [N];
// actions an integer Array of shape [N] (combined) or [N, 3] (factored). Step does not allocate.
type VecEnv struct {
	c         *core
	mode      envs.AutoresetMode
	eps       []episode     // contiguous: the step loop walks memory in order
	curricula []*Curriculum // one shared, or one per copy
	obs       envs.Array
	rewards   []float64
	term      []bool
	trunc     []bool
	explicit  [][]int64 // per-copy scratch for validated inputs
	cols      []int
	given     []bool
}

var (
	_ envs.VecEnv        = (*VecEnv)(nil)
	_ envs.ActionFactors = (*VecEnv)(nil)
)

// NewVecEnv builds n copies.
func NewVecEnv(cfg Config, n int) (*VecEnv, error) {
	if n < 1 {
		return nil, fmt.Errorf("algorithmic: %d copies, want >= 1", n)
	}
	c, err := cfg.core()
	if err != nil {
		return nil, err
	}
	v := &VecEnv{
		c: c, mode: cfg.Autoreset, eps: make([]episode, n),
		obs:     envs.NewArray(envs.Int64, n),
		rewards: make([]float64, n), term: make([]bool, n), trunc: make([]bool, n),
		explicit: make([][]int64, n), cols: make([]int, n), given: make([]bool, n),
	}
	shared := newCurriculum(cfg.Task)
	for i := range v.eps {
		cur := shared
		if cfg.PerCopyCurriculum {
			cur = newCurriculum(cfg.Task)
		}
		if i == 0 || cfg.PerCopyCurriculum {
			v.curricula = append(v.curricula, cur)
		}
		v.eps[i].init(cur)
	}
	return v, nil
}

func (v *VecEnv) NumEnvs() int                      { return len(v.eps) }
func (v *VecEnv) ObservationSpace() envs.Space      { return v.c.observationSpace() }
func (v *VecEnv) ActionSpace() envs.Space           { return v.c.actionSpace() }
func (v *VecEnv) AutoresetMode() envs.AutoresetMode { return v.mode }
func (v *VecEnv) Close() error                      { return nil }

// Reset resets the selected copies in index order (so a shared curriculum sees them in that order).
// Per-copy option "input" gives an explicit input. Nothing changes if any request part is invalid.
func (v *VecEnv) Reset(ctx context.Context, req envs.ResetRequest) (envs.Array, []envs.Info, error) {
	if err := ctx.Err(); err != nil {
		return envs.Array{}, nil, err
	}
	n := len(v.eps)
	if req.Seeds != nil && len(req.Seeds) != n {
		return envs.Array{}, nil, fmt.Errorf("%v: reset: %d seeds for %d copies", v.c.task, len(req.Seeds), n)
	}
	if req.Mask != nil && len(req.Mask) != n {
		return envs.Array{}, nil, fmt.Errorf("%v: reset: mask has %d entries for %d copies", v.c.task, len(req.Mask), n)
	}
	if req.PerCopy != nil && len(req.PerCopy) != n {
		return envs.Array{}, nil, fmt.Errorf("%v: reset: %d per-copy options for %d copies", v.c.task, len(req.PerCopy), n)
	}
	if err := envs.CheckOptionKeys(req.Options, OptInput); err != nil {
		return envs.Array{}, nil, fmt.Errorf("%v: reset: %w", v.c.task, err)
	}
	for i := range v.eps {
		e := &v.eps[i]
		v.given[i] = false
		if req.Mask != nil && !req.Mask[i] {
			if !e.started {
				return envs.Array{}, nil, fmt.Errorf("%v: reset: copy %d was never reset; the first reset must include every copy", v.c.task, i)
			}
			continue
		}
		in, ok := req.Options[OptInput]
		if req.PerCopy != nil {
			if err := envs.CheckOptionKeys(req.PerCopy[i], OptInput); err != nil {
				return envs.Array{}, nil, fmt.Errorf("%v: reset copy %d: %w", v.c.task, i, err)
			}
			if pin, pok := req.PerCopy[i][OptInput]; pok {
				in, ok = pin, true
			}
		}
		if ok {
			var err error
			v.explicit[i], v.cols[i], err = v.c.prepareInput(in, v.explicit[i])
			if err != nil {
				return envs.Array{}, nil, fmt.Errorf("reset copy %d: %w", i, err)
			}
			v.given[i] = true
		}
	}
	for i := range v.eps {
		e := &v.eps[i]
		if req.Mask != nil && !req.Mask[i] {
			continue
		}
		var seed *int64
		if req.Seeds != nil {
			seed = &req.Seeds[i]
		}
		var explicit []int64
		if v.given[i] {
			explicit = v.explicit[i]
		}
		v.obs.Ints[i] = v.c.reset(e, seed, explicit, v.cols[i])
	}
	return v.obs, nil, nil
}

// Step applies one action per copy. Invalid actions are reported before any copy moves.
func (v *VecEnv) Step(ctx context.Context, actions envs.Array) (envs.StepResult, error) {
	if err := ctx.Err(); err != nil {
		return envs.StepResult{}, err
	}
	if err := v.checkActions(actions); err != nil {
		return envs.StepResult{}, err
	}
	c, dim := v.c, v.c.actionDim
	for i := range v.eps {
		e := &v.eps[i]
		if e.ended {
			if v.mode == envs.AutoresetNextStep {
				v.obs.Ints[i] = c.reset(e, nil, nil, 0)
				v.rewards[i], v.term[i], v.trunc[i] = 0, false, false
			} else {
				v.obs.Ints[i] = c.obs(e)
				v.rewards[i], v.term[i], v.trunc[i] = 0, true, false
			}
			continue
		}
		var a int64
		if dim == 1 {
			a = actions.Ints[i]
		} else {
			r := actions.Ints[i*3 : i*3+3]
			a = r[0] + c.moves*r[1] + 2*c.moves*r[2]
		}
		v.obs.Ints[i], v.rewards[i], v.term[i] = c.step(e, a)
		v.trunc[i] = false
	}
	return envs.StepResult{Obs: v.obs, Rewards: v.rewards, Terminated: v.term, Truncated: v.trunc}, nil
}

func (v *VecEnv) checkActions(actions envs.Array) error {
	n, dim := len(v.eps), v.c.actionDim
	if actions.DType.IsFloat() || !actions.DType.Valid() {
		return fmt.Errorf("%v: step: actions have dtype %v, want an integer dtype", v.c.task, actions.DType)
	}
	if len(actions.Ints) != n*dim || actions.Rows() != n {
		return fmt.Errorf("%v: step: actions of shape %v with %d elements, want %d rows of %d", v.c.task, actions.Shape, len(actions.Ints), n, dim)
	}
	for i := range v.eps {
		e := &v.eps[i]
		if !e.started {
			return fmt.Errorf("%v: step before reset", v.c.task)
		}
		if dim == 1 {
			if a := actions.Ints[i]; a < 0 || a >= v.c.nActions {
				return fmt.Errorf("%v: step: copy %d: action %d out of range [0, %d)", v.c.task, i, a, v.c.nActions)
			}
			continue
		}
		r := actions.Ints[i*3 : i*3+3]
		if _, err := v.c.combine(r[0], r[1], r[2]); err != nil {
			return fmt.Errorf("%v: step: copy %d: %w", v.c.task, i, err)
		}
	}
	return nil
}

// ActionComponents returns (M, 2, base), the sizes of (move, write, char).
func (v *VecEnv) ActionComponents() []int64 { return v.c.components() }

// Task is the task the copies run.
func (v *VecEnv) Task() Task { return v.c.task }

// Base is the vocabulary size.
func (v *VecEnv) Base() int { return int(v.c.base) }

// Curriculum returns copy i's curriculum (the same one for every copy unless per-copy).
func (v *VecEnv) Curriculum(i int) *Curriculum { return v.eps[i].cur }

// MinLength is copy i's current curriculum min_length.
func (v *VecEnv) MinLength(i int) int { return v.eps[i].cur.MinLength() }

// TargetLength is len(target) of copy i's episode, its largest possible return.
func (v *VecEnv) TargetLength(i int) int { return len(v.eps[i].target) }

// Target returns a copy of copy i's target.
func (v *VecEnv) Target(i int) []int64 { return append([]int64(nil), v.eps[i].target...) }

// InputWidth is the number of symbols (tape) or columns (grid) of copy i's input.
func (v *VecEnv) InputWidth(i int) int { return v.eps[i].cols }

// TimeLimit is copy i's episode limit; it can last TimeLimit(i)+1 steps.
func (v *VecEnv) TimeLimit(i int) int { return v.eps[i].timeLimit }

// Render draws copy i as text.
func (v *VecEnv) Render(i int) string { return v.c.render(&v.eps[i], v.eps[i].cur.MinLength()) }
