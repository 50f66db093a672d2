package control

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

func seg(iteration, steps int) *Segment {
	return &Segment{Obs: make([]float32, (steps+1)*testDim), Actions: make([]int32, steps), Rewards: make([]float64, steps), Iteration: iteration}
}

func TestReplayEvictsOldestStepsFirst(t *testing.T) {
	r, err := NewReplay(250)
	if err != nil {
		t.Fatal(err)
	}
	for it := range 5 {
		r.Add(seg(it, 100))
	}
	if r.Steps() != 200 || r.Len() != 2 || r.segs[0].Iteration != 3 {
		t.Errorf("after 5 x 100 steps in 250: %d steps in %d segments, oldest from iteration %d; want 200, 2, 3", r.Steps(), r.Len(), r.segs[0].Iteration)
	}
	r.Add(seg(5, 400)) // larger than the capacity: kept alone
	if r.Len() != 1 || r.Steps() != 400 {
		t.Errorf("an oversized segment: %d segments, %d steps; want 1, 400", r.Len(), r.Steps())
	}
	if _, err := NewReplay(0); err == nil {
		t.Error("capacity 0: no error")
	}
}

// Sampling draws distinct segments, and single draws follow exp(w * (iteration - newest)).
func TestReplaySamplesByExponentiatedRecency(t *testing.T) {
	const w = 0.5
	r, _ := NewReplay(1 << 20)
	for it := range 6 {
		r.Add(seg(it, 1))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	got := r.Sample(rng, 10, w)
	if len(got) != 6 {
		t.Fatalf("asked 10 of 6: got %d", len(got))
	}
	seen := map[*Segment]bool{}
	for _, s := range got {
		if seen[s] {
			t.Fatal("a segment drawn twice in one batch")
		}
		seen[s] = true
	}
	const draws = 60000
	counts := make([]float64, 6)
	for range draws {
		counts[r.Sample(rng, 1, w)[0].Iteration]++
	}
	z := 0.0
	for it := range 6 {
		z += math.Exp(w * float64(it-5))
	}
	for it := range 6 {
		want := math.Exp(w*float64(it-5)) / z
		if got := counts[it] / draws; math.Abs(got-want) > 4*math.Sqrt(want*(1-want)/draws)+1e-3 {
			t.Errorf("iteration %d drawn with frequency %.4f, want %.4f", it, got, want)
		}
	}
	if r.Sample(rng, 3, 0) == nil || len(r.Sample(rng, 0, w)) != 0 {
		t.Error("weight 0 or n 0 misbehave")
	}
}

func TestReplayFileRoundTripAndRefusals(t *testing.T) {
	dir := t.TempDir()
	r, _ := NewReplay(1000)
	for it := range 3 {
		s := seg(it, 2+it)
		s.Obs[0], s.Rewards[0], s.Terminated = float32(it), float64(it)/3, it == 1
		r.Add(s)
	}
	path := filepath.Join(dir, "replay.bin")
	if err := r.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	back, _ := NewReplay(1000)
	if err := back.LoadFile(path, testDim); err != nil {
		t.Fatal(err)
	}
	if back.Len() != 3 || back.Steps() != r.Steps() || back.segs[2].Obs[0] != 2 || back.segs[1].Rewards[0] != 1.0/3 || !back.segs[1].Terminated {
		t.Errorf("round trip lost data: %d segments, %d steps", back.Len(), back.Steps())
	}
	if err := back.LoadFile(path, testDim+1); err == nil {
		t.Error("segments of another observation size: no error")
	}
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := back.LoadFile(path, testDim); err == nil {
		t.Error("a truncated file: no error")
	}
	if back.Len() != 3 {
		t.Error("a failed load changed the replay")
	}
}

// The running statistics equal the direct mean and variance of everything seen, however the
// rows arrive; Apply standardises and clips.
func TestNormalizerMatchesDirectStatistics(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const dim = 2
	var all []float32
	n := NewNormalizer(dim)
	for _, chunk := range []int{1, 7, 30, 2} {
		rows := make([]float32, chunk*dim)
		for i := range rows {
			rows[i] = float32(3 + 2*rng.NormFloat64()*float64(1+i%dim))
		}
		n.Update(rows)
		all = append(all, rows...)
	}
	m := len(all) / dim
	for j := range dim {
		mean, v := 0.0, 0.0
		for r := range m {
			mean += float64(all[r*dim+j])
		}
		mean /= float64(m)
		for r := range m {
			d := float64(all[r*dim+j]) - mean
			v += d * d
		}
		v /= float64(m)
		x := []float32{float32(mean + math.Sqrt(v)), 0}
		if j == 1 {
			x = []float32{0, float32(mean + math.Sqrt(v))}
		}
		out := make([]float32, dim)
		n.Apply(out, x)
		if math.Abs(float64(out[j])-1) > 1e-4 {
			t.Errorf("dimension %d: mean + std normalises to %v, want 1", j, out[j])
		}
	}
	if n.Count() != float64(m) {
		t.Errorf("count %v, want %d", n.Count(), m)
	}
	out := make([]float32, dim)
	n.Apply(out, []float32{1e9, -1e9})
	if out[0] != n.Clip || out[1] != -n.Clip {
		t.Errorf("extreme inputs normalise to %v, want +-%v", out, n.Clip)
	}
	fresh := NewNormalizer(dim)
	fresh.Apply(out, []float32{5, -7})
	if out[0] != 5 || out[1] != -7 {
		t.Errorf("a normaliser with no data changed its input: %v", out)
	}
}
