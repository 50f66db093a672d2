package envcheck

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// registryMaker makes id from the default registry.
func registryMaker(id string) Maker {
	reg := registry.Default()
	return func(_ context.Context, copies int, mode envs.AutoresetMode) (envs.VecEnv, error) {
		return reg.MakeRequest(envs.VecRequest{ID: id, Copies: copies, Autoreset: mode})
	}
}

// Every registered Go-native env keeps every rule.
func TestRegisteredEnvsPass(t *testing.T) {
	for _, id := range registry.Default().IDs() {
		t.Run(id, func(t *testing.T) {
			r := Check(context.Background(), id, registryMaker(id), Options{Seed: 3, Steps: 300})
			if !r.OK() {
				t.Errorf("%s:\n%s", id, r)
			}
			if len(r.Results) != len(Rules) {
				t.Errorf("%d results for %d rules", len(r.Results), len(Rules))
			}
		})
	}
}

// broken wraps a real VecEnv and breaks one rule.
type broken struct {
	envs.VecEnv
	rule   string
	steps  int
	ended  []bool // after-end: the copies whose episode ended
	closed bool
}

func (b *broken) Reset(ctx context.Context, req envs.ResetRequest) (envs.Array, []envs.Info, error) {
	obs, info, err := b.VecEnv.Reset(ctx, req)
	if b.rule == RuleReset.Name {
		obs = obs.RowRange(0, 1) // one row for two copies
	}
	if b.rule == RuleResetSeed.Name {
		b.steps++
		obs = obs.Clone()
		obs.Floats[0] += float64(b.steps)
	}
	return obs, info, err
}

func (b *broken) Step(ctx context.Context, actions envs.Array) (envs.StepResult, error) {
	if b.rule == RuleInvalidAction.Name && actions.Ints[0] > 1 {
		panic("index out of range")
	}
	res, err := b.VecEnv.Step(ctx, actions)
	b.steps++
	if b.rule == RuleAfterEnd.Name && err == nil {
		if b.ended == nil {
			b.ended = make([]bool, len(res.Rewards))
		}
		for i := range res.Rewards {
			if b.ended[i] {
				res.Rewards[i] = 1 // a reward after the end
			}
			b.ended[i] = b.ended[i] || res.Terminated[i] || res.Truncated[i]
		}
	}
	switch b.rule {
	case RuleFinite.Name:
		res.Rewards[0] = float64(b.steps) / 0 // +Inf
	case RuleDeterministic.Name:
		res.Rewards[1] += float64(b.steps)
	case RuleStep.Name:
		res.Obs.Ints[0] = 99
	}
	return res, err
}

func (b *broken) Close() error {
	if b.rule == RuleClose.Name && b.closed {
		return errors.New("already closed")
	}
	b.closed = true
	return b.VecEnv.Close()
}

// A broken env fails the rule it breaks, by name, and the report says why.
func TestBrokenEnvsFailTheirRule(t *testing.T) {
	cases := []struct {
		id, rule, says string
	}{
		{"Copy-v0", RuleReset.Name, "observations of shape"},
		{"CartPole-v1", RuleResetSeed.Name, "two resets"},
		{"Copy-v0", RuleStep.Name, "outside"},
		{"CartPole-v1", RuleFinite.Name, "reward is +Inf"},
		{"CartPole-v1", RuleDeterministic.Name, "rewards"},
		{"CartPole-v1", RuleAfterEnd.Name, "returned reward 1"},
		{"CartPole-v1", RuleInvalidAction.Name, "panicked"},
		{"CartPole-v1", RuleClose.Name, "second Close: already closed"},
	}
	for _, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) {
			real := registryMaker(tc.id)
			newEnv := func(ctx context.Context, copies int, mode envs.AutoresetMode) (envs.VecEnv, error) {
				env, err := real(ctx, copies, mode)
				if err != nil {
					return nil, err
				}
				return &broken{VecEnv: env, rule: tc.rule}, nil
			}
			r := Check(context.Background(), tc.id, newEnv, Options{Seed: 1, Steps: 100})
			if r.OK() {
				t.Fatalf("a %s-breaking env passes:\n%s", tc.rule, r)
			}
			f := r.Failed()[0]
			if f.Rule.Name != tc.rule || !strings.Contains(f.Err.Error(), tc.says) {
				t.Errorf("first failure %s: %v; want %s saying %q\n%s", f.Rule.Name, f.Err, tc.rule, tc.says, r)
			}
		})
	}
}

// An env that cannot be made fails the first rule and skips the rest.
func TestUnmakeableEnv(t *testing.T) {
	r := Check(context.Background(), "Nope-v0", registryMaker("Nope-v0"), Options{})
	if r.OK() || r.Results[0].Rule != RuleMake || r.Results[0].Err == nil || r.Results[1].Skip == "" {
		t.Errorf("report:\n%s", r)
	}
}
