package envcheck

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/sparsepcl/sparsepcl/envs"
)

// checkSpaces checks both spaces: known kinds with positive sizes and valid bounds and dtypes.
func checkSpaces(env envs.VecEnv) error {
	if env.NumEnvs() != copies {
		return fmt.Errorf("asked for %d copies, the env has %d", copies, env.NumEnvs())
	}
	for _, sp := range []struct {
		what string
		s    envs.Space
	}{{"observation", env.ObservationSpace()}, {"action", env.ActionSpace()}} {
		if err := validSpace(sp.s); err != nil {
			return fmt.Errorf("%s space %v: %w", sp.what, sp.s, err)
		}
	}
	return nil
}

// validSpace checks one space and its components.
func validSpace(s envs.Space) error {
	if s == nil {
		return fmt.Errorf("missing")
	}
	if s.FlatSize() < 1 || !s.DType().Valid() {
		return fmt.Errorf("flat size %d, dtype %v", s.FlatSize(), s.DType())
	}
	switch s := s.(type) {
	case envs.Discrete:
		if s.N < 1 {
			return fmt.Errorf("%d values", s.N)
		}
	case envs.Box:
		return s.Validate()
	case envs.MultiDiscrete:
		for i, n := range s.Nvec {
			if n < 1 {
				return fmt.Errorf("component %d has %d values", i, n)
			}
		}
	case envs.Tuple:
		for i, c := range s.Spaces {
			if err := validSpace(c); err != nil {
				return fmt.Errorf("component %d: %w", i, err)
			}
		}
	case envs.Dict:
		for _, k := range s.Keys() {
			if err := validSpace(s.Spaces[k]); err != nil {
				return fmt.Errorf("key %q: %w", k, err)
			}
		}
	}
	return nil
}

// checkObs checks a batch of observations: n rows of the space's size and dtype, each inside it.
func checkObs(s envs.Space, obs envs.Array, n int) error {
	if err := obs.Validate(); err != nil {
		return err
	}
	if obs.Rows() != n || obs.RowSize() != s.FlatSize() || obs.DType != s.DType() {
		return fmt.Errorf("observations of shape %v and dtype %v, want %d rows of %d %v", obs.Shape, obs.DType, n, s.FlatSize(), s.DType())
	}
	for i := range n {
		v, err := envs.ReadRow(s, obs, i)
		if err == nil {
			err = s.Check(v)
		}
		if err != nil {
			return fmt.Errorf("copy %d's observation is outside %v: %w", i, s, err)
		}
	}
	return nil
}

// trace is what one rollout saw, step by step, for comparing two.
type trace struct {
	obs        []envs.Array
	rewards    [][]float64
	terminated [][]bool
	truncated  [][]bool

	stepErr, finiteErr error
	afterEnd           error // nil: every copy seen after its end behaved
	seenAfterEnd       int   // copies stepped after their end
}

// rollout resets with the seeds and plays opts.Steps steps of random actions (drawn from the seed),
// resetting once every copy has ended and been stepped once more.
func (c *checker) rollout(env envs.VecEnv) trace {
	var tr trace
	rng := rand.New(rand.NewPCG(uint64(c.opts.Seed), 1))
	obsSpace, actSpace := env.ObservationSpace(), env.ActionSpace()
	if _, err := c.reset(env); err != nil {
		tr.stepErr = err
		return tr
	}
	ended := make([]bool, copies)
	final := make([]struct {
		obs         []float64
		term, trunc bool
	}, copies)
	for t := range c.opts.Steps {
		wasEnded := slices.Clone(ended) // the copies this step checks after their end
		actions := envs.NewBatch(actSpace, copies)
		for i := range copies {
			if err := envs.WriteRow(actSpace, actions, i, actSpace.Sample(rng)); err != nil {
				tr.stepErr = fmt.Errorf("write a sampled action: %w", err)
				return tr
			}
		}
		res, err := protect(func() (envs.StepResult, error) { return env.Step(c.ctx, actions) })
		if err == nil {
			err = checkStep(obsSpace, res)
		}
		if err != nil {
			tr.stepErr = fmt.Errorf("step %d: %w", t, err)
			return tr
		}
		tr.record(res)
		for i := range copies {
			if math.IsNaN(res.Rewards[i]) || math.IsInf(res.Rewards[i], 0) {
				tr.finiteErr = fmt.Errorf("step %d: copy %d's reward is %v", t, i, res.Rewards[i])
			}
			row := rowFloats(res.Obs, i)
			if ended[i] {
				tr.seenAfterEnd++
				f := final[i]
				if tr.afterEnd == nil && (!slices.Equal(row, f.obs) || res.Rewards[i] != 0 || res.Terminated[i] != f.term || res.Truncated[i] != f.trunc) {
					tr.afterEnd = fmt.Errorf("step %d: copy %d, stepped after its episode ended (terminated %v, truncated %v), returned reward %v, terminated %v, truncated %v and %s its final observation",
						t, i, f.term, f.trunc, res.Rewards[i], res.Terminated[i], res.Truncated[i], map[bool]string{true: "kept", false: "not"}[slices.Equal(row, f.obs)])
				}
				continue
			}
			if res.Terminated[i] || res.Truncated[i] {
				ended[i] = true
				final[i].obs, final[i].term, final[i].trunc = row, res.Terminated[i], res.Truncated[i]
			}
		}
		if !slices.Contains(wasEnded, false) {
			seeds := c.seeds()
			for i := range seeds {
				seeds[i] += int64(1000 * (t + 1))
			}
			if _, _, err := env.Reset(c.ctx, envs.ResetRequest{Seeds: seeds}); err != nil {
				tr.stepErr = fmt.Errorf("reset after step %d: %w", t, err)
				return tr
			}
			clear(ended)
		}
	}
	return tr
}

// checkStep checks one step's result for copies copies.
func checkStep(s envs.Space, res envs.StepResult) error {
	if len(res.Rewards) != copies || len(res.Terminated) != copies || len(res.Truncated) != copies {
		return fmt.Errorf("%d rewards, %d terminated and %d truncated flags for %d copies", len(res.Rewards), len(res.Terminated), len(res.Truncated), copies)
	}
	return checkObs(s, res.Obs, copies)
}

// record appends a copy of res.
func (tr *trace) record(res envs.StepResult) {
	tr.obs = append(tr.obs, res.Obs.Clone())
	tr.rewards = append(tr.rewards, slices.Clone(res.Rewards))
	tr.terminated = append(tr.terminated, slices.Clone(res.Terminated))
	tr.truncated = append(tr.truncated, slices.Clone(res.Truncated))
}

// diff is the first step at which two rollouts of the same seeds and actions part.
func (tr trace) diff(o trace) error {
	for t := range min(len(tr.obs), len(o.obs)) {
		switch {
		case !equalArrays(tr.obs[t], o.obs[t]):
			return fmt.Errorf("step %d: observations %v, then %v", t, tr.obs[t], o.obs[t])
		case !slices.Equal(tr.rewards[t], o.rewards[t]):
			return fmt.Errorf("step %d: rewards %v, then %v", t, tr.rewards[t], o.rewards[t])
		case !slices.Equal(tr.terminated[t], o.terminated[t]) || !slices.Equal(tr.truncated[t], o.truncated[t]):
			return fmt.Errorf("step %d: end flags %v %v, then %v %v", t, tr.terminated[t], tr.truncated[t], o.terminated[t], o.truncated[t])
		}
	}
	if len(tr.obs) != len(o.obs) {
		return fmt.Errorf("%d steps, then %d", len(tr.obs), len(o.obs))
	}
	return nil
}

// checkAfterEnd adds the after-end rule: the disabled mode from the rollout, the next-step mode
// from an env made in it.
func (c *checker) checkAfterEnd(tr trace) {
	if tr.afterEnd != nil {
		c.add(RuleAfterEnd, tr.afterEnd)
		return
	}
	if tr.seenAfterEnd == 0 {
		c.skip(RuleAfterEnd, fmt.Sprintf("no episode ended within %d random steps", c.opts.Steps))
		return
	}
	c.add(RuleAfterEnd, c.nextStepAfterEnd())
}

// nextStepAfterEnd steps an env in next-step autoreset mode until a copy's episode ends and checks
// the step after: reward 0, no end flags, an observation inside the space.
func (c *checker) nextStepAfterEnd() error {
	env, err := c.newEnv(c.ctx, copies, envs.AutoresetNextStep)
	if err != nil {
		return fmt.Errorf("make the env with next-step autoreset: %w", err)
	}
	defer env.Close()
	if _, _, err := env.Reset(c.ctx, envs.ResetRequest{Seeds: c.seeds()}); err != nil {
		return fmt.Errorf("next-step autoreset: Reset: %w", err)
	}
	rng := rand.New(rand.NewPCG(uint64(c.opts.Seed), 1))
	endedLast := make([]bool, copies)
	for t := range c.opts.Steps {
		actions := envs.NewBatch(env.ActionSpace(), copies)
		for i := range copies {
			if err := envs.WriteRow(env.ActionSpace(), actions, i, env.ActionSpace().Sample(rng)); err != nil {
				return err
			}
		}
		res, err := protect(func() (envs.StepResult, error) { return env.Step(c.ctx, actions) })
		if err == nil {
			err = checkStep(env.ObservationSpace(), res)
		}
		if err != nil {
			return fmt.Errorf("next-step autoreset: step %d: %w", t, err)
		}
		for i := range copies {
			if endedLast[i] {
				if res.Rewards[i] != 0 || res.Terminated[i] || res.Truncated[i] {
					return fmt.Errorf("next-step autoreset: step %d: copy %d, stepped after its episode ended, returned reward %v, terminated %v, truncated %v; want the new episode's first observation with reward 0 and no flags",
						t, i, res.Rewards[i], res.Terminated[i], res.Truncated[i])
				}
				return nil
			}
			endedLast[i] = res.Terminated[i] || res.Truncated[i]
		}
	}
	return nil
}

// invalidActions steps actions outside the action space: each must be an error, not a panic, and
// the env must still reset and step afterwards.
func (c *checker) invalidActions(env envs.VecEnv) error {
	space := env.ActionSpace()
	bad, what, ok := invalidAction(space)
	if !ok {
		return nil
	}
	if _, err := c.reset(env); err != nil {
		return err
	}
	_, err := protect(func() (envs.StepResult, error) { return env.Step(c.ctx, bad) })
	if err == nil {
		return fmt.Errorf("step accepted %s", what)
	}
	if _, ok := errors.AsType[*panicError](err); ok {
		return fmt.Errorf("step %v on %s", err, what)
	}
	if _, err := c.reset(env); err != nil {
		return fmt.Errorf("after refusing %s: %w", what, err)
	}
	good := envs.NewBatch(space, copies)
	rng := rand.New(rand.NewPCG(uint64(c.opts.Seed), 2))
	for i := range copies {
		if err := envs.WriteRow(space, good, i, space.Sample(rng)); err != nil {
			return err
		}
	}
	if _, err := protect(func() (envs.StepResult, error) { return env.Step(c.ctx, good) }); err != nil {
		return fmt.Errorf("after refusing %s, a valid step fails: %w", what, err)
	}
	return nil
}

// invalidAction is a batch of valid actions (zeros or the low bounds) whose first element is
// outside the action space's first leaf, and what it is; ok is false for a space without one.
func invalidAction(s envs.Space) (envs.Array, string, bool) {
	a := envs.NewBatch(s, copies)
	leaf := s
	for {
		switch l := leaf.(type) {
		case envs.Tuple:
			leaf = l.Spaces[0]
			continue
		case envs.Dict:
			leaf = l.Spaces[l.Keys()[0]]
			continue
		}
		break
	}
	rng := rand.New(rand.NewPCG(0, 0))
	for i := range copies {
		if err := envs.WriteRow(s, a, i, s.Sample(rng)); err != nil {
			return a, "", false
		}
	}
	switch l := leaf.(type) {
	case envs.Discrete:
		a.Ints[0] = l.Start + l.N
		return a, fmt.Sprintf("action %d of %v", a.Ints[0], l), true
	case envs.MultiDiscrete:
		a.Ints[0] = 1 << 40
		return a, fmt.Sprintf("component value %d of %v", a.Ints[0], l), true
	case envs.MultiBinary:
		a.Ints[0] = 2
		return a, fmt.Sprintf("value 2 of %v", l), true
	case envs.Box:
		if l.Dtype.IsFloat() {
			a.Floats[0] = math.NaN()
			return a, fmt.Sprintf("NaN in %v", l), true
		}
		if !math.IsInf(l.High[0], 0) {
			a.Ints[0] = int64(l.High[0]) + 1
			return a, fmt.Sprintf("%d in %v", a.Ints[0], l), true
		}
	}
	return a, "", false
}

// closeTwice makes an env and closes it twice.
func closeTwice(ctx context.Context, newEnv Maker) error {
	env, err := newEnv(ctx, copies, envs.AutoresetDisabled)
	if err != nil {
		return fmt.Errorf("make the env: %w", err)
	}
	if err := env.Close(); err != nil {
		return fmt.Errorf("first Close: %w", err)
	}
	if _, err := protect(func() (struct{}, error) { return struct{}{}, env.Close() }); err != nil {
		return fmt.Errorf("second Close: %w", err)
	}
	return nil
}

// equalArrays reports whether two arrays hold the same dtype, shape and values.
func equalArrays(a, b envs.Array) bool {
	return a.DType == b.DType && slices.Equal(a.Shape, b.Shape) && slices.Equal(a.Ints, b.Ints) && slices.EqualFunc(a.Floats, b.Floats, func(x, y float64) bool {
		return x == y || math.IsNaN(x) && math.IsNaN(y)
	})
}

// rowFloats is row i of a as floats (for comparing rows of either dtype).
func rowFloats(a envs.Array, i int) []float64 {
	n := a.RowSize()
	out := make([]float64, n)
	for j := range n {
		if a.DType.IsFloat() {
			out[j] = a.Floats[i*n+j]
		} else {
			out[j] = float64(a.Ints[i*n+j])
		}
	}
	return out
}
