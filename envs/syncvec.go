package envs

import (
	"context"
	"errors"
	"fmt"
	"maps"
)

// SyncVecEnv is n copies of any single-copy Env stepped one after another as one VecEnv, as
// Gymnasium's SyncVectorEnv: the way to train on, or check, an env written as an Env alone.
type SyncVecEnv struct {
	copies  []Env
	obsSp   Space
	actSp   Space
	mode    AutoresetMode
	ended   []bool
	final   StepResult // each ended copy's last step: its observation row and end flags
	obs     Array
	rewards []float64
	term    []bool
	trunc   []bool
	infos   []Info
	closed  bool
}

var _ VecEnv = (*SyncVecEnv)(nil)

// SyncVec makes n copies with newEnv and steps them as one VecEnv in autoreset mode mode. The copies
// must declare the same spaces.
func SyncVec(newEnv func() (Env, error), n int, mode AutoresetMode) (*SyncVecEnv, error) {
	if n < 1 {
		return nil, fmt.Errorf("envs: sync vec: %d copies, want >= 1", n)
	}
	if mode != AutoresetNextStep && mode != AutoresetDisabled {
		return nil, fmt.Errorf("envs: sync vec: unknown autoreset mode %d", mode)
	}
	v := &SyncVecEnv{mode: mode, ended: make([]bool, n), rewards: make([]float64, n), term: make([]bool, n), trunc: make([]bool, n)}
	for i := range n {
		env, err := newEnv()
		if err == nil && env == nil {
			err = errors.New("made a nil env")
		}
		if err != nil {
			return nil, errors.Join(fmt.Errorf("envs: sync vec: copy %d: %w", i, err), v.Close())
		}
		v.copies = append(v.copies, env)
		if i == 0 {
			v.obsSp, v.actSp = env.ObservationSpace(), env.ActionSpace()
			continue
		}
		if fmt.Sprint(env.ObservationSpace()) != fmt.Sprint(v.obsSp) || fmt.Sprint(env.ActionSpace()) != fmt.Sprint(v.actSp) {
			return nil, errors.Join(fmt.Errorf("envs: sync vec: copy %d has spaces %v, %v; copy 0 %v, %v", i, env.ObservationSpace(), env.ActionSpace(), v.obsSp, v.actSp), v.Close())
		}
	}
	if v.obsSp == nil || v.actSp == nil {
		return nil, errors.Join(errors.New("envs: sync vec: the env declares no observation or action space"), v.Close())
	}
	v.obs, v.final.Obs = NewBatch(v.obsSp, n), NewBatch(v.obsSp, n)
	v.final.Terminated, v.final.Truncated = make([]bool, n), make([]bool, n)
	return v, nil
}

func (v *SyncVecEnv) NumEnvs() int                 { return len(v.copies) }
func (v *SyncVecEnv) ObservationSpace() Space      { return v.obsSp }
func (v *SyncVecEnv) ActionSpace() Space           { return v.actSp }
func (v *SyncVecEnv) AutoresetMode() AutoresetMode { return v.mode }

// Reset resets the copies req selects, each with its seed and its options merged over req.Options.
func (v *SyncVecEnv) Reset(ctx context.Context, req ResetRequest) (Array, []Info, error) {
	if err := ctx.Err(); err != nil {
		return Array{}, nil, err
	}
	n := len(v.copies)
	if (req.Seeds != nil && len(req.Seeds) != n) || (req.Mask != nil && len(req.Mask) != n) || (req.PerCopy != nil && len(req.PerCopy) != n) {
		return Array{}, nil, fmt.Errorf("envs: sync vec: reset: seeds, mask and per-copy options need %d entries each, have %d, %d, %d", n, len(req.Seeds), len(req.Mask), len(req.PerCopy))
	}
	infos := make([]Info, n)
	for i, env := range v.copies {
		if req.Mask != nil && !req.Mask[i] {
			continue
		}
		var seed *int64
		if req.Seeds != nil {
			seed = &req.Seeds[i]
		}
		opts := req.Options
		if req.PerCopy != nil && req.PerCopy[i] != nil {
			opts = maps.Clone(req.Options)
			if opts == nil {
				opts = map[string]any{}
			}
			maps.Copy(opts, req.PerCopy[i])
		}
		obs, info, err := env.Reset(seed, opts)
		if err != nil {
			return Array{}, nil, fmt.Errorf("envs: sync vec: reset copy %d: %w", i, err)
		}
		if err := WriteRow(v.obsSp, v.obs, i, obs); err != nil {
			return Array{}, nil, fmt.Errorf("envs: sync vec: copy %d's reset observation: %w", i, err)
		}
		v.ended[i], infos[i] = false, info
	}
	return v.obs, infos, nil
}

// Step checks every copy's action, then steps the copies in order. A copy whose episode has ended
// does as the autoreset mode says (VecEnv): with autoreset disabled its row repeats its final
// observation with reward 0 and its end flags; with next-step autoreset it starts a new episode
// (its random stream continuing), reward 0 and no flags.
func (v *SyncVecEnv) Step(ctx context.Context, actions Array) (StepResult, error) {
	if err := ctx.Err(); err != nil {
		return StepResult{}, err
	}
	n := len(v.copies)
	if actions.Rows() != n {
		return StepResult{}, fmt.Errorf("envs: sync vec: %d action rows for %d copies", actions.Rows(), n)
	}
	acts := make([]any, n)
	for i := range n {
		a, err := ReadRow(v.actSp, actions, i)
		if err == nil {
			err = v.actSp.Check(a)
		}
		if err != nil {
			return StepResult{}, fmt.Errorf("envs: sync vec: copy %d's action is outside the action space %v: %w", i, v.actSp, err)
		}
		acts[i] = a
	}
	v.infos = nil
	for i, env := range v.copies {
		if err := v.stepCopy(i, env, acts[i]); err != nil {
			return StepResult{}, err
		}
	}
	return StepResult{Obs: v.obs, Rewards: v.rewards, Terminated: v.term, Truncated: v.trunc, Infos: v.infos}, nil
}

// stepCopy steps copy i with action a (or plays its after-end part) into the step's rows.
func (v *SyncVecEnv) stepCopy(i int, env Env, a any) error {
	v.rewards[i] = 0
	if v.ended[i] && v.mode == AutoresetDisabled {
		copyRow(v.obs, v.final.Obs, i)
		v.term[i], v.trunc[i] = v.final.Terminated[i], v.final.Truncated[i]
		return nil
	}
	var obs any
	var info Info
	var err error
	if v.ended[i] {
		obs, info, err = env.Reset(nil, nil)
		v.ended[i], v.term[i], v.trunc[i] = false, false, false
	} else {
		var r float64
		obs, r, v.term[i], v.trunc[i], info, err = env.Step(a)
		v.rewards[i] = r
	}
	if err != nil {
		return fmt.Errorf("envs: sync vec: copy %d: %w", i, err)
	}
	if err := WriteRow(v.obsSp, v.obs, i, obs); err != nil {
		return fmt.Errorf("envs: sync vec: copy %d's observation: %w", i, err)
	}
	if v.term[i] || v.trunc[i] {
		v.ended[i] = true
		copyRow(v.final.Obs, v.obs, i)
		v.final.Terminated[i], v.final.Truncated[i] = v.term[i], v.trunc[i]
	}
	if info != nil {
		if v.infos == nil {
			v.infos = make([]Info, len(v.copies))
		}
		v.infos[i] = info
	}
	return nil
}

// Close closes every copy once; later calls do nothing.
func (v *SyncVecEnv) Close() error {
	if v.closed {
		return nil
	}
	v.closed = true
	var errs []error
	for i, env := range v.copies {
		if err := env.Close(); err != nil {
			errs = append(errs, fmt.Errorf("envs: sync vec: close copy %d: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

// copyRow copies row i of src into dst (arrays of one dtype and shape).
func copyRow(dst, src Array, i int) {
	n := src.RowSize()
	if src.DType.IsFloat() {
		copy(dst.Floats[i*n:(i+1)*n], src.Floats[i*n:(i+1)*n])
		return
	}
	copy(dst.Ints[i*n:(i+1)*n], src.Ints[i*n:(i+1)*n])
}
