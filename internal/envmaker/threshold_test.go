package envmaker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/bridge"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// The thresholds of the Go-native ids are Gymnasium's: each equals what the server's
// gymnasium.spec registers for the same id (none for Pendulum-v1).
func TestGoNativeThresholdsAreGymnasiums(t *testing.T) {
	needServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := bridge.StartServer(ctx, bridge.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	reg := registry.Default()
	native := &Maker{Registry: reg}
	remote := &Maker{Registry: reg, Servers: []string{srv.Endpoint}}
	for _, id := range reg.IDs() {
		th, ok, err := native.RewardThreshold(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		gth, gok, err := remote.RewardThreshold(ctx, id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if th != gth || ok != gok {
			t.Errorf("%s: Go registry (%v, %v), gymnasium (%v, %v)", id, th, ok, gth, gok)
		}
	}
}

// Remote ids get the threshold the server's gymnasium registers, through a server started for the
// question; an id without one reports none, and an unknown id is ErrUnknownEnv.
func TestRemoteThresholds(t *testing.T) {
	needServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m := &Maker{Registry: registry.Default()}
	for _, tc := range []struct {
		id   string
		th   float64
		ok   bool
		fail bool
	}{
		{"FrozenLake-v1", 0.7, true, false},
		{"Blackjack-v1", 0, false, false},
		{"NoSuchEnv-v0", 0, false, true},
	} {
		th, ok, err := m.RewardThreshold(ctx, tc.id)
		if tc.fail {
			if !errors.Is(err, ErrUnknownEnv) {
				t.Errorf("%s: error %v, want ErrUnknownEnv", tc.id, err)
			}
			continue
		}
		if err != nil || th != tc.th || ok != tc.ok {
			t.Errorf("%s: (%v, %v, %v), want (%v, %v)", tc.id, th, ok, err, tc.th, tc.ok)
		}
	}
}
