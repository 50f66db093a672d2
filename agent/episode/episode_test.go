package episode

import (
	"encoding/json"
	"testing"
)

// Validate holds both instantiations to the same shape invariants, with dim values per state.
func TestValidate(t *testing.T) {
	good := func() *Trajectory[float32] {
		return &Trajectory[float32]{Obs: make([]float32, 3*2), Actions: []int32{0, 1}, Rewards: []float64{1, 2}}
	}
	if err := good().Validate(2); err != nil {
		t.Fatal(err)
	}
	tok := &Episode{Obs: []int32{0, 1, 2}, Actions: []int32{0, 1}, Rewards: []float64{1, 2}}
	if err := tok.Validate(TokenDim); err != nil {
		t.Fatal(err)
	}
	if tok.Len() != 2 || tok.TotalReward() != 3 {
		t.Errorf("Len %d, TotalReward %v", tok.Len(), tok.TotalReward())
	}
	for name, bad := range map[string]func(*Trajectory[float32]){
		"no steps":       func(e *Trajectory[float32]) { e.Actions, e.Rewards, e.Obs = nil, nil, e.Obs[:2] },
		"short obs":      func(e *Trajectory[float32]) { e.Obs = e.Obs[:4] },
		"short rewards":  func(e *Trajectory[float32]) { e.Rewards = e.Rewards[:1] },
		"returns to go":  func(e *Trajectory[float32]) { e.ReturnToGo = []float64{1} },
		"both end flags": func(e *Trajectory[float32]) { e.Terminated, e.Truncated = true, true },
	} {
		e := good()
		bad(e)
		if err := e.Validate(2); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if err := good().Validate(3); err == nil {
		t.Error("another dim: no error")
	}
}

// An Episode encodes to JSON as the earlier Episode struct did: the fields the algorithmic
// trajectories never set are left out.
func TestEpisodeJSONUnchanged(t *testing.T) {
	b, err := json.Marshal(&Episode{Obs: []int32{3, 4}, Actions: []int32{1}, Rewards: []float64{0.5}, Terminated: true, Iteration: 7})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"obs":[3,4],"actions":[1],"rewards":[0.5],"terminated":true,"iteration":7}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	var back Episode
	if err := json.Unmarshal(b, &back); err != nil || back.Iteration != 7 || !back.Terminated || back.Obs[1] != 4 {
		t.Errorf("decoded %+v, %v", back, err)
	}
}
