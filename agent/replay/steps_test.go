package replay

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/episode"
)

// vecDim is the observation size of the vector sub-episodes of these tests.
const vecDim = 3

func seg(iteration, steps int) *episode.Trajectory[float32] {
	return &episode.Trajectory[float32]{Obs: make([]float32, (steps+1)*vecDim), Actions: make([]int32, steps), Rewards: make([]float64, steps), Iteration: iteration}
}

// newSteps is the long-episode replay: capacity env steps, drawn by recency weight w.
func newSteps(t *testing.T, capacity int, w float64) *Buffer[float32] {
	t.Helper()
	b, err := New[float32](Steps(capacity), Recency{Weight: w})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// add stores s with its iteration as the priority, as the long-episode trainer does.
func add(t *testing.T, b *Buffer[float32], s *episode.Trajectory[float32]) {
	t.Helper()
	if err := b.Add(nil, s, float64(s.Iteration)); err != nil {
		t.Fatal(err)
	}
}

func TestStepsEvictsOldestFirst(t *testing.T) {
	r := newSteps(t, 250, 0.01)
	for it := range 5 {
		add(t, r, seg(it, 100))
	}
	if r.Steps() != 200 || r.Len() != 2 || r.items[0].Iteration != 3 || r.prio[0] != 3 {
		t.Errorf("after 5 x 100 steps in 250: %d steps in %d segments, oldest from iteration %d; want 200, 2, 3", r.Steps(), r.Len(), r.items[0].Iteration)
	}
	add(t, r, seg(5, 400)) // larger than the capacity: kept alone
	if r.Len() != 1 || r.Steps() != 400 {
		t.Errorf("an oversized segment: %d segments, %d steps; want 1, 400", r.Len(), r.Steps())
	}
	for _, bad := range []struct {
		keep Capacity
		draw Draw
	}{{Steps(0), Recency{}}, {Steps(10), Recency{Weight: -1}}, {Steps(10), Recency{Weight: math.Inf(1)}}} {
		if _, err := New[float32](bad.keep, bad.draw); err == nil {
			t.Errorf("%+v %+v: no error", bad.keep, bad.draw)
		}
	}
}

// Sampling draws distinct segments, and single draws follow exp(w * (iteration - newest)).
func TestRecencySamplesByExponentiatedIteration(t *testing.T) {
	const w = 0.5
	r := newSteps(t, 1<<20, w)
	for it := range 6 {
		add(t, r, seg(it, 1))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	got := r.Sample(rng, 10)
	if len(got) != 6 {
		t.Fatalf("asked 10 of 6: got %d", len(got))
	}
	seen := map[*episode.Trajectory[float32]]bool{}
	for _, s := range got {
		if seen[s] {
			t.Fatal("a segment drawn twice in one batch")
		}
		seen[s] = true
	}
	const draws = 60000
	counts := make([]float64, 6)
	for range draws {
		counts[r.Sample(rng, 1)[0].Iteration]++
	}
	z := 0.0
	for it := range 6 {
		z += math.Exp(w * float64(it-5))
	}
	p := r.Probabilities()
	for it := range 6 {
		want := math.Exp(w*float64(it-5)) / z
		if math.Abs(p[it]-want) > 1e-12 {
			t.Errorf("iteration %d: probability %v, want %v", it, p[it], want)
		}
		if got := counts[it] / draws; math.Abs(got-want) > 4*math.Sqrt(want*(1-want)/draws)+1e-3 {
			t.Errorf("iteration %d drawn with frequency %.4f, want %.4f", it, got, want)
		}
	}
	uniform := newSteps(t, 1<<20, 0)
	add(t, uniform, seg(0, 1))
	add(t, uniform, seg(9, 1))
	if len(uniform.Sample(rng, 3)) != 2 || len(r.Sample(rng, 0)) != 0 {
		t.Error("weight 0 or n 0 misbehave")
	}
}

func TestStepsFileRoundTripAndRefusals(t *testing.T) {
	dir := t.TempDir()
	r := newSteps(t, 1000, 0.01)
	for it := range 3 {
		s := seg(it, 2+it)
		s.Obs[0], s.Rewards[0], s.Terminated = float32(it), float64(it)/3, it == 1
		add(t, r, s)
	}
	path := filepath.Join(dir, "replay.bin")
	if err := r.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	back := newSteps(t, 1000, 0.01)
	if err := back.LoadFile(path, vecDim); err != nil {
		t.Fatal(err)
	}
	if back.Len() != 3 || back.Steps() != r.Steps() || back.items[2].Obs[0] != 2 || back.items[1].Rewards[0] != 1.0/3 || !back.items[1].Terminated ||
		!reflect.DeepEqual(back.prio, r.prio) {
		t.Errorf("round trip lost data: %d segments, %d steps, priorities %v", back.Len(), back.Steps(), back.prio)
	}
	if err := back.LoadFile(path, vecDim+1); err == nil {
		t.Error("segments of another observation size: no error")
	}
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := back.LoadFile(path, vecDim); err == nil {
		t.Error("a truncated file: no error")
	}
	if back.Len() != 3 {
		t.Error("a failed load changed the replay")
	}
}

// fixtureSegments are the segments of testdata/replay-v1.gob: every combination of the end flags,
// with and without returns to go (discount 0.9), in dim vecDim.
func fixtureSegments() []*episode.Trajectory[float32] {
	var out []*episode.Trajectory[float32]
	for i, k := range []struct{ terminated, truncated, rtg bool }{
		{false, false, false}, {true, false, true}, {false, true, true}, {false, false, true},
	} {
		L := 1 + i
		s := &episode.Trajectory[float32]{Obs: make([]float32, (L+1)*vecDim), Actions: make([]int32, L), Rewards: make([]float64, L),
			Terminated: k.terminated, Truncated: k.truncated, Iteration: 10 + i}
		for j := range s.Obs {
			s.Obs[j] = float32(j)*0.25 - float32(i)
		}
		for t := range L {
			s.Actions[t], s.Rewards[t] = int32(3*i+t), float64(t)/3-float64(i)
		}
		if k.rtg {
			s.ReturnToGo = make([]float64, L)
			g := 0.0
			for t := L - 1; t >= 0; t-- {
				g = s.Rewards[t] + 0.9*g
				s.ReturnToGo[t] = g
			}
		}
		out = append(out, s)
	}
	return out
}

// A replay file written by an earlier build (testdata/replay-v1.gob, written by the long-episode
// replay of agent/control when Segment was its own struct there) still loads, segment for segment,
// with the iterations as priorities, and the current build writes it in a form that loads back to
// the same segments. Runs in progress resume from such files.
func TestStepsFileFromEarlierBuildLoads(t *testing.T) {
	want := fixtureSegments()
	r := newSteps(t, 1000, 0.01)
	if err := r.LoadFile(filepath.Join("testdata", "replay-v1.gob"), vecDim); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.items, want) || !reflect.DeepEqual(r.prio, []float64{10, 11, 12, 13}) {
		t.Fatalf("loaded %+v (priorities %v), want %+v", r.items, r.prio, want)
	}
	path := filepath.Join(t.TempDir(), "replay.gob")
	if err := r.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	back := newSteps(t, 1000, 0.01)
	if err := back.LoadFile(path, vecDim); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.items, want) {
		t.Fatalf("rewritten file loads %+v, want %+v", back.items, want)
	}
}
