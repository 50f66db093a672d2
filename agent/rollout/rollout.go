// Package rollout samples whole episodes from a VecEnv with a PCL model: all copies start together,
// step in lockstep (the VecEnv in AutoresetDisabled mode) until every copy has ended, and come back
// as whole episodes (each terminated or truncated) with their final observations and rewards.
package rollout

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/sparsepcl/sparsepcl/agent/episode"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/policy"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs"
)

// Sampler collects batches of episodes from one VecEnv.
type Sampler struct {
	env      envs.VecEnv
	model    *pcl.Model
	maxSteps int
	explore  float64 // probability of an exploring action at a drawn step
	explorer int     // copies [0, explorer) explore
	temp     float64 // exploring actions from softmax(z/temp) of the logits (0: uniformly)
}

// Result is one batch of episodes with policy statistics over the visited states.
type Result struct {
	Episodes []*episode.Episode
	Stats    pcl.Stats
	// MeanReward is the mean total reward per episode.
	MeanReward float64
	// EnvSteps is the number of environment steps taken by live copies.
	EnvSteps int
	// Explored is the number of those steps that took a uniformly random action (SetExplore).
	Explored int
}

// CheckEnv verifies that env fits a PCL model: Discrete observations and actions, autoreset
// disabled. It returns the model's Spec (action components from envs.ActionFactors when the env
// has them, else one component).
func CheckEnv(env envs.VecEnv) (pcl.Spec, error) {
	if env.AutoresetMode() != envs.AutoresetDisabled {
		return pcl.Spec{}, fmt.Errorf("rollout: env autoreset mode is %v, the sampler needs %v", env.AutoresetMode(), envs.AutoresetDisabled)
	}
	obs, ok := env.ObservationSpace().(envs.Discrete)
	if !ok || obs.Start != 0 {
		return pcl.Spec{}, fmt.Errorf("rollout: observation space %v is not Discrete(n) starting at 0", env.ObservationSpace())
	}
	act, ok := env.ActionSpace().(envs.Discrete)
	if !ok || act.Start != 0 {
		return pcl.Spec{}, fmt.Errorf("rollout: action space %v is not Discrete(n) starting at 0 (combine Tuple actions first)", env.ActionSpace())
	}
	spec := pcl.Spec{ObsVocab: int(obs.N), ActionComponents: []int{int(act.N)}}
	if f, ok := env.(envs.ActionFactors); ok {
		comps := f.ActionComponents()
		spec.ActionComponents = spec.ActionComponents[:0]
		for _, c := range comps {
			spec.ActionComponents = append(spec.ActionComponents, int(c))
		}
		if spec.NumActions() != int(act.N) {
			return pcl.Spec{}, fmt.Errorf("rollout: action components %v do not multiply to |A| = %d", comps, act.N)
		}
	}
	return spec, nil
}

// NewSampler returns a sampler of at most maxSteps steps per episode (longer ones are truncated).
func NewSampler(env envs.VecEnv, model *pcl.Model, maxSteps int) (*Sampler, error) {
	spec, err := CheckEnv(env)
	if err != nil {
		return nil, err
	}
	if spec.ObsVocab != model.Spec.ObsVocab || spec.NumActions() != model.Spec.NumActions() {
		return nil, fmt.Errorf("rollout: env has %d observations and %d actions, the model %d and %d", spec.ObsVocab, spec.NumActions(), model.Spec.ObsVocab, model.Spec.NumActions())
	}
	// Equal |A| is not enough: the previous action is embedded per component, so a model built for
	// other components would read the env's actions with another encoding than it was built for.
	if !slices.Equal(spec.ActionComponents, model.Spec.ActionComponents) {
		return nil, fmt.Errorf("rollout: env has action components %v, the model %v", spec.ActionComponents, model.Spec.ActionComponents)
	}
	if maxSteps < 1 {
		return nil, fmt.Errorf("rollout: max steps %d, want >= 1", maxSteps)
	}
	return &Sampler{env: env, model: model, maxSteps: maxSteps}, nil
}

// SetExplore makes each drawn step of the first ⌈share·n⌉ copies (share 0: every copy) take a
// uniformly random action with probability eps instead of the policy's draw (ε-uniform
// exploration); eps 0, the default, draws from the policy alone. Greedy sampling is unaffected.
// The statistics in Result stay the policy's.
func (s *Sampler) SetExplore(eps, share float64) error {
	if !(eps >= 0 && eps < 1) {
		return fmt.Errorf("rollout: exploration probability %v, want it in [0, 1)", eps)
	}
	if !(share >= 0 && share <= 1) {
		return fmt.Errorf("rollout: exploring share of the copies %v, want it in [0, 1] (0: every copy)", share)
	}
	n := s.env.NumEnvs()
	s.explore, s.explorer = eps, n
	if share > 0 {
		s.explorer = int(math.Ceil(share * float64(n)))
	}
	return nil
}

// SetExploreTemperature makes the exploring actions of SetExplore draw from softmax(z/temp) of
// the policy's logits z instead of uniform ones: every action stays possible, ranked by its logit,
// so the runners-up that a sparse policy keeps out of its support are proposed far more often
// than 1/|A| while the actions it has learned to avoid are proposed less. temp 0, the default,
// keeps the uniform draw; a large temp approaches it.
func (s *Sampler) SetExploreTemperature(temp float64) error {
	if !(temp >= 0) || math.IsInf(temp, 0) {
		return fmt.Errorf("rollout: exploration temperature %v, want a finite value >= 0 (0: uniform)", temp)
	}
	s.temp = temp
	return nil
}

// Sample plays one episode in every copy. Copy i is reset with seed seedBase+i, so a batch is a
// function of the model, seedBase and rng alone (and the env's curriculum). With greedy the
// policy's most likely action is taken; otherwise actions are drawn from the policy with rng
// (and, under SetExplore, sometimes uniformly). Episodes are tagged with iteration.
func (s *Sampler) Sample(ctx context.Context, rng *rand.Rand, greedy bool, iteration int, seedBase int64) (Result, error) {
	n := s.env.NumEnvs()
	eps, err := s.reset(ctx, n, iteration, seedBase)
	if err != nil {
		return Result{}, err
	}
	m := s.model
	F, K := m.Spec.Features(), m.Spec.NumActions()
	sizes := m.Net.Config().HeadSizes
	heads := make([]*tensor.Matrix, len(sizes))
	for i, sz := range sizes {
		heads[i] = tensor.New(n, sz)
	}
	state := m.Net.NewState(n)
	tokens := make([]int32, n*F)
	done := make([]bool, n)
	actions := envs.NewArray(envs.Int64, n)
	sc := choiceScratch{p: make([]float32, K), z: make([]float32, K), q: make([]float32, K)}
	var res Result
	live := n
	for step := 0; live > 0; step++ {
		if err := ctx.Err(); err != nil {
			return Result{}, fmt.Errorf("rollout: %w", err)
		}
		s.fillTokens(tokens, eps)
		if err := m.Net.Step(state, tokens, heads); err != nil {
			return Result{}, fmt.Errorf("rollout: %w", err)
		}
		for i := range eps {
			actions.Ints[i] = 0
			if done[i] {
				continue
			}
			a, err := s.choose(&sc, heads[0].Row(i), i, greedy, rng, &res)
			if err != nil {
				return Result{}, err
			}
			actions.Ints[i] = int64(a)
		}
		out, err := s.env.Step(ctx, actions)
		if err != nil {
			return Result{}, fmt.Errorf("rollout: step: %w", err)
		}
		live -= s.record(eps, done, actions, out, &res)
	}
	res.Episodes = eps
	for _, e := range eps {
		res.MeanReward += e.TotalReward()
	}
	res.MeanReward /= float64(n)
	return res, nil
}

// reset starts one episode per copy, copy i from seed seedBase + i.
func (s *Sampler) reset(ctx context.Context, n, iteration int, seedBase int64) ([]*episode.Episode, error) {
	req := envs.ResetRequest{Seeds: make([]int64, n)}
	for i := range req.Seeds {
		req.Seeds[i] = seedBase + int64(i)
	}
	obs, _, err := s.env.Reset(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("rollout: reset: %w", err)
	}
	eps := make([]*episode.Episode, n)
	for i := range eps {
		eps[i] = &episode.Episode{Obs: []int32{int32(obs.Ints[i])}, Iteration: iteration}
	}
	return eps, nil
}

// fillTokens writes each copy's input tokens: its last observation and previous action.
func (s *Sampler) fillTokens(tokens []int32, eps []*episode.Episode) {
	spec := s.model.Spec
	F := spec.Features()
	for i, e := range eps {
		row := tokens[i*F : (i+1)*F]
		row[0] = e.Obs[len(e.Obs)-1]
		prev := -1
		if len(e.Actions) > 0 {
			prev = int(e.Actions[len(e.Actions)-1])
		}
		spec.PrevActionTokens(row[1:], prev)
	}
}

// choiceScratch is the policy, logits and exploring distribution of one copy's step.
type choiceScratch struct{ p, z, q []float32 }

// choose draws copy i's action from its heads row h: greedy, exploring or from the policy, and
// adds the policy to res's statistics.
func (s *Sampler) choose(sc *choiceScratch, h []float32, i int, greedy bool, rng *rand.Rand, res *Result) (int, error) {
	s.model.Probs(sc.p, sc.z, h)
	var a int
	switch {
	case greedy:
		a = policy.Greedy(sc.z, nil)
	case s.explore > 0 && i < s.explorer && rng.Float64() < s.explore:
		// Only an exploring sampler draws this number: without it the stream, and so every
		// run, stays what it was.
		if s.temp > 0 {
			a = policy.SampleSoftmaxWithUniform(sc.q, sc.z, s.temp, rng.Float64())
		} else {
			a = rng.IntN(len(sc.z))
		}
		res.Explored++
	default:
		a = policy.Sample(sc.p, rng)
	}
	if a < 0 {
		return 0, fmt.Errorf("rollout: copy %d: the policy has no valid action (non-finite logits?)", i)
	}
	res.Stats.Add(sc.p)
	return a, nil
}

// record appends the step's outcome to the episodes still running and returns how many ended.
func (s *Sampler) record(eps []*episode.Episode, done []bool, actions envs.Array, out envs.StepResult, res *Result) (ended int) {
	for i, e := range eps {
		if done[i] {
			continue
		}
		e.Actions = append(e.Actions, int32(actions.Ints[i]))
		e.Rewards = append(e.Rewards, out.Rewards[i])
		e.Obs = append(e.Obs, int32(out.Obs.Ints[i]))
		res.EnvSteps++
		switch {
		case out.Terminated[i]:
			e.Terminated, done[i] = true, true
		case out.Truncated[i] || e.Len() >= s.maxSteps:
			e.Truncated, done[i] = true, true
		}
		if done[i] {
			ended++
		}
	}
	return ended
}
