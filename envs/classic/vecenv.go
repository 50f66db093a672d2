package classic

import (
	"context"
	"fmt"

	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/classic/nprand"
)

// VecEnv is N copies of one classic-control environment stepped as one batch, each with its own
// generator and TimeLimit. Observations are a Float32 Array of shape [N, d]; actions an integer Array
// of shape [N] (Discrete) or a float Array of shape [N, 1] (Box). Step does not allocate.
type VecEnv struct {
	sp       *spec
	cfg      config
	sims     []sim
	rngs     []nprand.Generator
	elapsed  []int
	started  []bool
	ended    []bool
	endTerm  []bool
	endTrunc []bool
	bnds     []bounds // scratch: the parsed reset bounds of each copy
	obs      envs.Array
	rewards  []float64
	term     []bool
	trunc    []bool
	acts     []float64 // scratch: the validated actions
}

var _ envs.VecEnv = (*VecEnv)(nil)

// NewVecEnv builds n copies of id with make options (see the package doc).
func NewVecEnv(id string, n int, options map[string]any) (*VecEnv, error) {
	if n < 1 {
		return nil, fmt.Errorf("classic: %d copies, want >= 1", n)
	}
	sp, err := lookup(id)
	if err != nil {
		return nil, err
	}
	cfg, err := sp.parseMake(options, true)
	if err != nil {
		return nil, err
	}
	v := &VecEnv{
		sp: sp, cfg: cfg, sims: make([]sim, n), rngs: make([]nprand.Generator, n),
		elapsed: make([]int, n), started: make([]bool, n), ended: make([]bool, n),
		endTerm: make([]bool, n), endTrunc: make([]bool, n), bnds: make([]bounds, n),
		obs:     envs.NewBatch(sp.obs, n),
		rewards: make([]float64, n), term: make([]bool, n), trunc: make([]bool, n), acts: make([]float64, n),
	}
	for i := range v.sims {
		v.sims[i] = sp.newSim(cfg)
		v.rngs[i] = nprand.Random()
	}
	return v, nil
}

func (v *VecEnv) NumEnvs() int                      { return len(v.sims) }
func (v *VecEnv) ObservationSpace() envs.Space      { return v.sp.obs }
func (v *VecEnv) ActionSpace() envs.Space           { return v.sp.act }
func (v *VecEnv) AutoresetMode() envs.AutoresetMode { return v.cfg.autoreset }
func (v *VecEnv) Close() error                      { return nil }

// MaxEpisodeSteps is the TimeLimit in force.
func (v *VecEnv) MaxEpisodeSteps() int { return v.cfg.maxSteps }

// Elapsed is the number of steps of copy i's current episode.
func (v *VecEnv) Elapsed(i int) int { return v.elapsed[i] }

// Reset resets the selected copies. The request is checked whole first: if any part is invalid,
// nothing changes.
func (v *VecEnv) Reset(ctx context.Context, req envs.ResetRequest) (envs.Array, []envs.Info, error) {
	if err := ctx.Err(); err != nil {
		return envs.Array{}, nil, err
	}
	n, id := len(v.sims), v.sp.id
	if req.Seeds != nil && len(req.Seeds) != n {
		return envs.Array{}, nil, fmt.Errorf("%s: reset: %d seeds for %d copies", id, len(req.Seeds), n)
	}
	if req.Mask != nil && len(req.Mask) != n {
		return envs.Array{}, nil, fmt.Errorf("%s: reset: mask has %d entries for %d copies", id, len(req.Mask), n)
	}
	if req.PerCopy != nil && len(req.PerCopy) != n {
		return envs.Array{}, nil, fmt.Errorf("%s: reset: %d per-copy options for %d copies", id, len(req.PerCopy), n)
	}
	for i := range v.sims {
		if req.Mask != nil && !req.Mask[i] {
			if !v.started[i] {
				return envs.Array{}, nil, fmt.Errorf("%s: reset: copy %d was never reset; the first reset must include every copy", id, i)
			}
			continue
		}
		if req.Seeds != nil && req.Seeds[i] < 0 {
			return envs.Array{}, nil, fmt.Errorf("%s: reset copy %d: seed must be a non-negative integer, got %d", id, i, req.Seeds[i])
		}
		var over map[string]any
		if req.PerCopy != nil {
			over = req.PerCopy[i]
		}
		b, err := v.sp.parseReset(req.Options, over)
		if err != nil {
			return envs.Array{}, nil, fmt.Errorf("copy %d: %w", i, err)
		}
		v.bnds[i] = b
	}
	rs := v.obs.RowSize()
	for i := range v.sims {
		if req.Mask != nil && !req.Mask[i] {
			continue
		}
		if req.Seeds != nil {
			v.rngs[i], _ = nprand.New(req.Seeds[i]) // checked above
		}
		v.sims[i].reset(&v.rngs[i], v.bnds[i], v.obs.Floats[i*rs:(i+1)*rs])
		v.elapsed[i], v.started[i], v.ended[i] = 0, true, false
		v.endTerm[i], v.endTrunc[i] = false, false
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
	rs := v.obs.RowSize()
	for i, s := range v.sims {
		row := v.obs.Floats[i*rs : (i+1)*rs]
		if v.ended[i] {
			if v.cfg.autoreset == envs.AutoresetNextStep {
				s.reset(&v.rngs[i], v.sp.defaultBounds(), row)
				v.elapsed[i], v.ended[i] = 0, false
				v.rewards[i], v.term[i], v.trunc[i] = 0, false, false
			} else {
				v.rewards[i], v.term[i], v.trunc[i] = 0, v.endTerm[i], v.endTrunc[i]
			}
			continue
		}
		r, term := s.step(v.acts[i], row)
		v.elapsed[i]++
		trunc := v.elapsed[i] >= v.cfg.maxSteps
		v.rewards[i], v.term[i], v.trunc[i] = r, term, trunc
		if term || trunc {
			v.ended[i], v.endTerm[i], v.endTrunc[i] = true, term, trunc
		}
	}
	return envs.StepResult{Obs: v.obs, Rewards: v.rewards, Terminated: v.term, Truncated: v.trunc}, nil
}

func (v *VecEnv) checkActions(actions envs.Array) error {
	n, id := len(v.sims), v.sp.id
	for i := range v.sims {
		if !v.started[i] {
			return fmt.Errorf("%s: step before reset (copy %d)", id, i)
		}
	}
	if v.sp.discrete > 0 {
		if actions.DType.IsFloat() || !actions.DType.Valid() {
			return fmt.Errorf("%s: step: actions have dtype %v, want an integer dtype", id, actions.DType)
		}
		if len(actions.Ints) != n || actions.Rows() != n {
			return fmt.Errorf("%s: step: actions of shape %v with %d elements, want %d", id, actions.Shape, len(actions.Ints), n)
		}
		for i, a := range actions.Ints {
			x, err := v.sp.checkIntAction(a)
			if err != nil {
				return fmt.Errorf("step: copy %d: %w", i, err)
			}
			v.acts[i] = x
		}
		return nil
	}
	if !actions.DType.IsFloat() {
		return fmt.Errorf("%s: step: actions have dtype %v, want a float dtype", id, actions.DType)
	}
	if len(actions.Floats) != n || actions.Rows() != n {
		return fmt.Errorf("%s: step: actions of shape %v with %d elements, want %d rows of 1", id, actions.Shape, len(actions.Floats), n)
	}
	for i, a := range actions.Floats {
		x, err := v.sp.checkFloatAction(a)
		if err != nil {
			return fmt.Errorf("step: copy %d: %w", i, err)
		}
		v.acts[i] = x
	}
	return nil
}
