package noiseenv

import "testing"

// The env checks its actions, draws its observations in range, and truncates at its limit only.
func TestEnv(t *testing.T) {
	e := New(5, 3, 1)
	e.Limit = 2
	obs, _, err := e.Reset(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ObservationSpace().Check(obs); err != nil {
		t.Fatalf("first observation out of its space: %v", err)
	}
	for _, tc := range []struct {
		action    any
		truncated bool
		bad       bool
	}{{int64(5), false, true}, {int64(4), false, false}, {int64(0), true, false}} {
		obs, _, term, trunc, _, err := e.Step(tc.action)
		if (err != nil) != tc.bad {
			t.Fatalf("Step(%v): error %v, want an error: %v", tc.action, err, tc.bad)
		}
		if tc.bad {
			continue
		}
		if term || trunc != tc.truncated {
			t.Errorf("Step(%v): terminated %v truncated %v, want false %v", tc.action, term, trunc, tc.truncated)
		}
		if err := e.ObservationSpace().Check(obs); err != nil {
			t.Errorf("observation out of its space: %v", err)
		}
	}
}
