package lstm_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/model/lstm"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/registry"
	"github.com/sparsepcl/sparsepcl/envs/wrappers"
)

// copyOptions are Copy's options at base 3 with autoreset disabled, and extra.
func copyOptions(extra map[string]any) map[string]any {
	o := map[string]any{"base": 3, "autoreset": "disabled"}
	for k, v := range extra {
		o[k] = v
	}
	return o
}

// respaced is a real algorithmic VecEnv that reports other spaces or action components: no
// Go-native env has a Box observation or a shifted Discrete (the bridge's HalfCheetah, which does,
// needs Python), and SpecOf reads nothing but these methods.
type respaced struct {
	envs.VecEnv
	obs, act   envs.Space // nil: the wrapped env's
	components []int64    // nil: no ActionFactors at all
}

func (r respaced) ObservationSpace() envs.Space {
	if r.obs != nil {
		return r.obs
	}
	return r.VecEnv.ObservationSpace()
}

func (r respaced) ActionSpace() envs.Space {
	if r.act != nil {
		return r.act
	}
	return r.VecEnv.ActionSpace()
}

type factoredRespaced struct{ respaced }

func (r factoredRespaced) ActionComponents() []int64 { return r.components }

func TestSpecOf(t *testing.T) {
	copy3 := func(extra map[string]any) envs.VecEnv {
		env, err := registry.MakeVec("Copy-v0", 2, copyOptions(extra))
		if err != nil {
			t.Fatal(err)
		}
		return env
	}
	combined, err := wrappers.CombineVecActions(copy3(map[string]any{"factored_actions": true}))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		env     envs.VecEnv
		want    lstm.Spec
		wantErr []string
	}{
		{"combined Copy", copy3(nil), lstm.Spec{ObsVocab: 4, ActionComponents: []int{2, 2, 3}}, nil},
		{"factored Copy through CombineVecActions", combined, lstm.Spec{ObsVocab: 4, ActionComponents: []int{2, 2, 3}}, nil},
		{"reversed addition (4 moves)", func() envs.VecEnv {
			e, err := registry.MakeVec("ReversedAddition-v0", 2, map[string]any{"base": 3, "autoreset": "disabled"})
			if err != nil {
				t.Fatal(err)
			}
			return e
		}(), lstm.Spec{ObsVocab: 4, ActionComponents: []int{4, 2, 3}}, nil},
		{"no action factors: one component", respaced{VecEnv: copy3(nil)}, lstm.Spec{ObsVocab: 4, ActionComponents: []int{12}}, nil},
		{"tuple actions", copy3(map[string]any{"factored_actions": true}), lstm.Spec{}, []string{"action space Tuple", "not Discrete(n) starting at 0", "combine Tuple actions"}},
		{"box observations", respaced{VecEnv: copy3(nil), obs: envs.NewBox(-1, 1, envs.Float64, 17)}, lstm.Spec{}, []string{"observation space Box", "not Discrete(n) starting at 0"}},
		{"observations start at 1", respaced{VecEnv: copy3(nil), obs: envs.Discrete{N: 4, Start: 1}}, lstm.Spec{}, []string{"observation space", "not Discrete(n) starting at 0"}},
		{"actions start at 1", respaced{VecEnv: copy3(nil), act: envs.Discrete{N: 12, Start: 1}}, lstm.Spec{}, []string{"action space", "not Discrete(n) starting at 0"}},
		{"components do not multiply to |A|", factoredRespaced{respaced{VecEnv: copy3(nil), components: []int64{2, 2, 2}}}, lstm.Spec{}, []string{"action components [2 2 2]", "|A| = 12"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := lstm.SpecOf(tc.env)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(spec, tc.want) {
					t.Fatalf("spec %+v, want %+v", spec, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, spec %+v", spec)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
