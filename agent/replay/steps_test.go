package replay

import (
	"bytes"
	"encoding/gob"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/atomicfile"
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
		s.Obs[0], s.Rewards[0], s.Terminated, s.Truncated = float32(it)+0.1, float64(it)/3, it == 1, it == 2
		if it != 0 {
			s.ReturnToGo = make([]float64, s.Len())
			s.ReturnToGo[0] = math.Pi * float64(it)
		}
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
	if !reflect.DeepEqual(back.items, r.items) || back.Steps() != r.Steps() || !reflect.DeepEqual(back.prio, r.prio) {
		t.Errorf("round trip lost data: %d segments, %d steps, priorities %v", back.Len(), back.Steps(), back.prio)
	}
	if err := back.LoadFile(path, vecDim+1); err == nil {
		t.Error("segments of another observation size: no error")
	}
	data, _ := os.ReadFile(path)
	flipped := slices.Clone(data)
	flipped[len(flipped)/2] ^= 1
	if err := back.Decode(flipped, vecDim); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("a flipped bit: %v, want a checksum error", err)
	}
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

// SaveFile streams a replay of vectors: saving one allocates a small fraction of the file's size,
// not a second copy of the replay.
func TestStepsSaveFileStreams(t *testing.T) {
	r := newSteps(t, 1<<20, 0.01)
	for it := range 2000 {
		add(t, r, seg(it, 100))
	}
	path := filepath.Join(t.TempDir(), "replay.bin")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := r.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > uint64(info.Size())/20 {
		t.Errorf("saving a %d-byte replay allocated %d bytes, want under a twentieth of it", info.Size(), allocated)
	}
}

// BenchmarkSaveSteps saves a long-episode replay of 100,000 steps of HalfCheetah-sized
// observations (17 values, with returns to go), alternately in the same run as version 2
// streamed to the file (SaveFile) and as version 1 was written, gob into memory and then to the
// file: ms per save (v2-ms, v1-ms), their ratio (speedup), and the files' bytes per step.
func BenchmarkSaveSteps(b *testing.B) {
	const dim, steps = 17, 100
	r, err := New[float32](Steps(100000), Recency{Weight: 0.01})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for it := range 1000 {
		s := &episode.Trajectory[float32]{Obs: make([]float32, (steps+1)*dim), Actions: make([]int32, steps), Rewards: make([]float64, steps),
			ReturnToGo: make([]float64, steps), Iteration: it}
		for i := range s.Obs {
			s.Obs[i] = float32(rng.NormFloat64())
		}
		if err := r.Add(rng, s, float64(it)); err != nil {
			b.Fatal(err)
		}
	}
	dir := b.TempDir()
	v2, v1 := filepath.Join(dir, "v2.bin"), filepath.Join(dir, "v1.gob")
	var t2, t1 time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := r.SaveFile(v2); err != nil {
			b.Fatal(err)
		}
		t2 += time.Since(t0)
		t0 = time.Now()
		var out bytes.Buffer
		if err := gob.NewEncoder(&out).Encode(vectorFile{Version: 1, Capacity: r.keep.Limit, Segments: r.items}); err != nil {
			b.Fatal(err)
		}
		if err := atomicfile.WriteFile(v1, out.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
		t1 += time.Since(t0)
	}
	n := float64(b.N)
	b.ReportMetric(float64(t2.Microseconds())/1000/n, "v2-ms")
	b.ReportMetric(float64(t1.Microseconds())/1000/n, "v1-ms")
	b.ReportMetric(float64(t1)/float64(t2), "speedup")
	for _, f := range []struct{ path, unit string }{{v2, "v2-bytes/step"}, {v1, "v1-bytes/step"}} {
		info, err := os.Stat(f.path)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(info.Size())/float64(r.Steps()), f.unit)
	}
}
