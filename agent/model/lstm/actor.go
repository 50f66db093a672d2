package lstm

import (
	"fmt"
	"slices"

	"github.com/sparsepcl/sparsepcl/agent/collect"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs"
)

// Actor acts with the LSTM in the copies of one env, one step at a time: it carries each copy's
// recurrent state from step to step (collect.Actor).
type Actor struct {
	m      *Model
	state  *State
	tokens []int32
	heads  []*tensor.Matrix
}

// NewActor returns an actor for the copies of env, which must fit the model: the same
// observation vocabulary and action components (equal |A| is not enough: the previous action is
// embedded per component, so other components would be read with another encoding).
func (m *Model) NewActor(env envs.VecEnv) (*Actor, error) {
	spec, err := SpecOf(env)
	if err != nil {
		return nil, err
	}
	if spec.ObsVocab != m.Spec.ObsVocab || !slices.Equal(spec.ActionComponents, m.Spec.ActionComponents) {
		return nil, fmt.Errorf("lstm: env has %d observations and action components %v, the model %d and %v",
			spec.ObsVocab, spec.ActionComponents, m.Spec.ObsVocab, m.Spec.ActionComponents)
	}
	n := env.NumEnvs()
	a := &Actor{m: m, state: m.Net.NewState(n), tokens: make([]int32, n*m.Spec.Features())}
	for _, size := range m.Net.Config().HeadSizes {
		a.heads = append(a.heads, tensor.New(n, size))
	}
	return a, nil
}

// Layout is the model's heads.
func (a *Actor) Layout() *pcl.Heads { return &a.m.Heads }

// InputDim is one token per observation.
func (a *Actor) InputDim() int { return 1 }

// Begin zeroes the recurrent state of the copies starting an episode.
func (a *Actor) Begin(fresh []bool) {
	for i, f := range fresh {
		if f {
			clear(a.state.H.Row(i))
			clear(a.state.C.Row(i))
		}
	}
}

// Act advances every copy by one step on its observation token obs[i] and previous action
// prev[i] (-1: none) and returns head 0, one row per copy (valid until the next Act).
func (a *Actor) Act(obs, prev []int32) (*tensor.Matrix, error) {
	n, F := a.state.B, a.m.Spec.Features()
	if len(obs) != n || len(prev) != n {
		return nil, fmt.Errorf("lstm: actor of %d copies given %d observations and %d previous actions", n, len(obs), len(prev))
	}
	for i := range n {
		row := a.tokens[i*F : (i+1)*F]
		row[0] = obs[i]
		a.m.Spec.PrevActionTokens(row[1:], int(prev[i]))
	}
	if err := a.m.Net.Step(a.state, a.tokens, a.heads); err != nil {
		return nil, fmt.Errorf("lstm: act: %w", err)
	}
	return a.heads[0], nil
}

// NewCollector returns the collector of the model's whole episodes in env's copies, cut at
// maxSteps steps: its actor, reading each observation's token.
func (m *Model) NewCollector(env envs.VecEnv, maxSteps int) (*collect.Collector[int32], error) {
	actor, err := m.NewActor(env)
	if err != nil {
		return nil, err
	}
	return collect.New[int32](env, TokenEncoder{N: m.Spec.ObsVocab}, actor, collect.Options{MaxSteps: maxSteps})
}

// TokenEncoder writes a Discrete observation of n symbols as its token id, the LSTM's input
// (collect.Encoder).
type TokenEncoder struct{ N int }

// Dim is one token.
func (TokenEncoder) Dim() int { return 1 }

// Encode writes row r of obs into dst[0], refusing a symbol outside [0, N).
func (e TokenEncoder) Encode(dst []int32, obs envs.Array, r int) error {
	v := obs.Ints[r]
	if v < 0 || v >= int64(e.N) {
		return fmt.Errorf("lstm: observation %d of copy %d outside [0, %d)", v, r, e.N)
	}
	dst[0] = int32(v)
	return nil
}
