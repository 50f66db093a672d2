package mlp

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/collect"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// The watcher of a greedy evaluation sees one row of logits per state acted in, and watching
// changes no return.
func TestGreedyWatchSeesEveryState(t *testing.T) {
	_, l, _ := newCopySampler(t, 2, 3)
	env, err := registry.MakeVec("Copy-v0", 2, map[string]any{"base": 2, "autoreset": "disabled"})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	enc, err := NewEncoder(env.ObservationSpace())
	if err != nil {
		t.Fatal(err)
	}
	c, err := collect.New(env, enc, l.Model, collect.Options{MaxSteps: 50})
	if err != nil {
		t.Fatal(err)
	}
	g, err := pcl.NewGapCounter(pcl.GapThresholds(), 1)
	if err != nil {
		t.Fatal(err)
	}
	states := 0
	c.Watch = func(z []float32) {
		states++
		g.Add(z)
	}
	watched, err := c.Episodes(context.Background(), nil, collect.Greedy, 0, 7)
	if err != nil {
		t.Fatal(err)
	}
	c.Watch = nil
	plain, err := c.Episodes(context.Background(), nil, collect.Greedy, 0, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(watched.Returns, plain.Returns) {
		t.Errorf("returns %v watched, %v not", watched.Returns, plain.Returns)
	}
	if states != watched.EnvSteps || states == 0 {
		t.Fatalf("watched %d states, the copies played %d steps", states, watched.EnvSteps)
	}
	res := g.Result()
	if res.States != states || res.Actions != l.Model.NumActions() || res.Within[len(res.Within)-1] < 1 {
		t.Errorf("gaps %+v", res)
	}
	if !strings.Contains(res.String(), "of 8;") {
		t.Errorf("summary %q", res.String())
	}
}
