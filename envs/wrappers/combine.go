package wrappers

import (
	"context"
	"fmt"

	"github.com/sparsepcl/sparsepcl/envs"
)

// TupleCombiner numbers the members of a Tuple of Discretes, or the elements of a MultiDiscrete:
// index = d0 + n0*(d1 + n1*(d2 + ...)) with d_i = value_i - start_i.
type TupleCombiner struct {
	radix  envs.MixedRadix
	starts []int64
	tuple  envs.Tuple
}

// NewTupleCombiner accepts a Tuple whose components are all Discrete, or a MultiDiscrete (whose
// batch rows have the same layout: one integer per component).
func NewTupleCombiner(s envs.Space) (*TupleCombiner, error) {
	if md, ok := s.(envs.MultiDiscrete); ok {
		t := envs.Tuple{Spaces: make([]envs.Space, len(md.Nvec))}
		for i, n := range md.Nvec {
			var start int64
			if md.Start != nil {
				start = md.Start[i]
			}
			t.Spaces[i] = envs.Discrete{N: n, Start: start}
		}
		s = t
	}
	t, ok := s.(envs.Tuple)
	if !ok {
		return nil, fmt.Errorf("combine: action space %v is neither a Tuple nor a MultiDiscrete", s)
	}
	sizes := make([]int64, len(t.Spaces))
	starts := make([]int64, len(t.Spaces))
	for i, sub := range t.Spaces {
		d, ok := sub.(envs.Discrete)
		if !ok {
			return nil, fmt.Errorf("combine: component %d of %v is %v, not a Discrete", i, s, sub)
		}
		sizes[i], starts[i] = d.N, d.Start
	}
	r, err := envs.NewMixedRadix(sizes...)
	if err != nil {
		return nil, fmt.Errorf("combine %v: %w", s, err)
	}
	return &TupleCombiner{radix: r, starts: starts, tuple: t}, nil
}

// Space is the combined Discrete.
func (c *TupleCombiner) Space() envs.Discrete { return envs.Discrete{N: c.radix.Size()} }

// ActionComponents returns the component sizes.
func (c *TupleCombiner) ActionComponents() []int64 { return c.radix.Sizes() }

// Action turns an index into the tuple value.
func (c *TupleCombiner) Action(index int64) ([]any, error) {
	digits := make([]int64, c.radix.Len())
	if err := c.SplitInto(index, digits); err != nil {
		return nil, err
	}
	out := make([]any, len(digits))
	for i, d := range digits {
		out[i] = d
	}
	return out, nil
}

// SplitInto writes the component values (starts added) of index into dst without allocating.
func (c *TupleCombiner) SplitInto(index int64, dst []int64) error {
	if err := c.radix.Split(index, dst); err != nil {
		return fmt.Errorf("combine: %w", err)
	}
	for i := range dst {
		dst[i] += c.starts[i]
	}
	return nil
}

// Index turns a tuple value into its index.
func (c *TupleCombiner) Index(action []any) (int64, error) {
	if err := c.tuple.Check(action); err != nil {
		return 0, fmt.Errorf("combine: %w", err)
	}
	digits := make([]int64, len(action))
	for i, a := range action {
		digits[i] = a.(int64) - c.starts[i]
	}
	return c.radix.Combine(digits)
}

// CombinedEnv is an Env whose Tuple-of-Discretes action space is seen as one Discrete.
type CombinedEnv struct {
	envs.Env
	Combiner *TupleCombiner
}

// CombineActions wraps env.
func CombineActions(env envs.Env) (*CombinedEnv, error) {
	c, err := NewTupleCombiner(env.ActionSpace())
	if err != nil {
		return nil, err
	}
	return &CombinedEnv{Env: env, Combiner: c}, nil
}

func (e *CombinedEnv) ActionSpace() envs.Space   { return e.Combiner.Space() }
func (e *CombinedEnv) ActionComponents() []int64 { return e.Combiner.ActionComponents() }

// Step takes an int64 index.
func (e *CombinedEnv) Step(action any) (any, float64, bool, bool, envs.Info, error) {
	if err := e.Combiner.Space().Check(action); err != nil {
		return nil, 0, false, false, nil, fmt.Errorf("combine: %w", err)
	}
	a, err := e.Combiner.Action(action.(int64))
	if err != nil {
		return nil, 0, false, false, nil, err
	}
	return e.Env.Step(a)
}

// CombinedVecEnv is a VecEnv whose Tuple-of-Discretes actions are taken as indices: Step converts an
// integer Array of shape [N] into the [N, components] Array the wrapped VecEnv expects, without
// allocating.
type CombinedVecEnv struct {
	envs.VecEnv
	Combiner *TupleCombiner
	buf      envs.Array
}

// CombineVecActions wraps venv.
func CombineVecActions(venv envs.VecEnv) (*CombinedVecEnv, error) {
	c, err := NewTupleCombiner(venv.ActionSpace())
	if err != nil {
		return nil, err
	}
	buf := envs.NewBatch(venv.ActionSpace(), venv.NumEnvs())
	if buf.DType.IsFloat() {
		return nil, fmt.Errorf("combine: action space %v has dtype %v", venv.ActionSpace(), buf.DType)
	}
	return &CombinedVecEnv{VecEnv: venv, Combiner: c, buf: buf}, nil
}

func (e *CombinedVecEnv) ActionSpace() envs.Space   { return e.Combiner.Space() }
func (e *CombinedVecEnv) ActionComponents() []int64 { return e.Combiner.ActionComponents() }

// Step converts the indices and steps the wrapped VecEnv.
func (e *CombinedVecEnv) Step(ctx context.Context, actions envs.Array) (envs.StepResult, error) {
	n, k := e.NumEnvs(), e.Combiner.radix.Len()
	if err := checkIndexArray(actions, n); err != nil {
		return envs.StepResult{}, fmt.Errorf("combine: %w", err)
	}
	for i, a := range actions.Ints {
		if err := e.Combiner.SplitInto(a, e.buf.Ints[i*k:(i+1)*k]); err != nil {
			return envs.StepResult{}, fmt.Errorf("copy %d: %w", i, err)
		}
	}
	return e.VecEnv.Step(ctx, e.buf)
}

// checkIndexArray accepts an integer Array of n indices (shape [n] or [n, 1]).
func checkIndexArray(a envs.Array, n int) error {
	if a.DType.IsFloat() || !a.DType.Valid() {
		return fmt.Errorf("actions have dtype %v, want an integer dtype", a.DType)
	}
	if len(a.Ints) != n || a.Rows() != n {
		return fmt.Errorf("actions of shape %v with %d elements, want %d indices", a.Shape, len(a.Ints), n)
	}
	return nil
}
