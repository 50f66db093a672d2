package lstm

import (
	"fmt"

	"github.com/sparsepcl/sparsepcl/envs"
)

// Spec describes the task the model acts in: a Discrete observation of ObsVocab symbols and a combined
// Discrete action whose mixed-radix components (first least significant) are ActionComponents.
type Spec struct {
	ObsVocab         int
	ActionComponents []int
}

// NumActions is the product of the components.
func (s Spec) NumActions() int {
	n := 1
	for _, c := range s.ActionComponents {
		n *= c
	}
	return n
}

// Features is the number of input tokens per step: the observation and one per action component.
func (s Spec) Features() int { return 1 + len(s.ActionComponents) }

// InputVocabs are the embedding vocabularies: the observation, then each action component plus an
// explicit "none" (index = component size) for the previous action at episode start.
func (s Spec) InputVocabs() []int {
	v := []int{s.ObsVocab}
	for _, c := range s.ActionComponents {
		v = append(v, c+1)
	}
	return v
}

// PrevActionTokens writes the tokens of the previous action a (-1: none) into dst (len = components).
func (s Spec) PrevActionTokens(dst []int32, a int) {
	for i, c := range s.ActionComponents {
		if a < 0 {
			dst[i] = int32(c)
			continue
		}
		dst[i] = int32(a % c)
		a /= c
	}
}

func (s Spec) validate() error {
	if s.ObsVocab < 1 || len(s.ActionComponents) == 0 {
		return fmt.Errorf("lstm: spec needs an observation vocabulary and action components, have %+v", s)
	}
	for i, c := range s.ActionComponents {
		if c < 1 {
			return fmt.Errorf("lstm: action component %d has size %d", i, c)
		}
	}
	return nil
}

// SpecOf is the Spec of the model for env: Discrete observations and actions, the action's
// components from envs.ActionFactors when the env has them, else one component.
func SpecOf(env envs.VecEnv) (Spec, error) {
	obs, ok := env.ObservationSpace().(envs.Discrete)
	if !ok || obs.Start != 0 {
		return Spec{}, fmt.Errorf("lstm: observation space %v is not Discrete(n) starting at 0", env.ObservationSpace())
	}
	act, ok := env.ActionSpace().(envs.Discrete)
	if !ok || act.Start != 0 {
		return Spec{}, fmt.Errorf("lstm: action space %v is not Discrete(n) starting at 0 (combine Tuple actions first)", env.ActionSpace())
	}
	spec := Spec{ObsVocab: int(obs.N), ActionComponents: []int{int(act.N)}}
	if f, ok := env.(envs.ActionFactors); ok {
		spec.ActionComponents = spec.ActionComponents[:0]
		for _, c := range f.ActionComponents() {
			spec.ActionComponents = append(spec.ActionComponents, int(c))
		}
		if spec.NumActions() != int(act.N) {
			return Spec{}, fmt.Errorf("lstm: action components %v do not multiply to |A| = %d", spec.ActionComponents, act.N)
		}
	}
	return spec, nil
}
