package control

import (
	"encoding/gob"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"

	"github.com/sparsepcl/sparsepcl/internal/atomicfile"
)

// Replay holds sub-episodes up to a capacity in env steps, evicting the oldest first, and samples
// them by exponentiated recency: segment i is drawn with probability proportional to
// exp(weight * (iteration_i - newest iteration)), without replacement (the paper's HalfCheetah
// setting: weight 0.01).
type Replay struct {
	capacity int
	steps    int
	segs     []*Segment // oldest first
	w        []float64  // sampling scratch
}

// NewReplay returns an empty replay of capacity env steps.
func NewReplay(capacity int) (*Replay, error) {
	if capacity < 1 {
		return nil, fmt.Errorf("control: replay capacity %d steps, want >= 1", capacity)
	}
	return &Replay{capacity: capacity}, nil
}

// Len is the number of segments held; Steps the number of env steps.
func (r *Replay) Len() int   { return len(r.segs) }
func (r *Replay) Steps() int { return r.steps }

// Add stores s, evicting the oldest segments while the capacity is exceeded (s itself is kept even
// when it alone exceeds the capacity).
func (r *Replay) Add(s *Segment) {
	r.segs = append(r.segs, s)
	r.steps += s.Len()
	drop := 0
	for r.steps > r.capacity && drop < len(r.segs)-1 {
		r.steps -= r.segs[drop].Len()
		drop++
	}
	if drop > 0 {
		r.segs = append(r.segs[:0], r.segs[drop:]...)
	}
}

// Sample draws min(n, Len) distinct segments with recency weight.
func (r *Replay) Sample(rng *rand.Rand, n int, weight float64) []*Segment {
	n = min(n, len(r.segs))
	if n == 0 {
		return nil
	}
	newest := r.segs[len(r.segs)-1].Iteration
	for _, s := range r.segs {
		newest = max(newest, s.Iteration)
	}
	r.w = r.w[:0]
	total := 0.0
	for _, s := range r.segs {
		w := math.Exp(weight * float64(s.Iteration-newest))
		r.w = append(r.w, w)
		total += w
	}
	out := make([]*Segment, 0, n)
	for range n {
		u := rng.Float64() * total
		pick := -1
		for i, w := range r.w {
			if w == 0 {
				continue
			}
			pick = i
			if u < w {
				break
			}
			u -= w
		}
		out = append(out, r.segs[pick])
		total -= r.w[pick]
		r.w[pick] = 0
	}
	return out
}

// replayFile is the on-disk form of a Replay.
type replayFile struct {
	Version  int
	Capacity int
	Segments []*Segment
}

// SaveFile writes the replay to path atomically.
func (r *Replay) SaveFile(path string) error {
	err := atomicfile.Write(path, 0o644, func(w io.Writer) error {
		return gob.NewEncoder(w).Encode(replayFile{Version: 1, Capacity: r.capacity, Segments: r.segs})
	})
	if err != nil {
		return fmt.Errorf("control: save replay: %w", err)
	}
	return nil
}

// LoadFile replaces the replay's contents with the file's, checking every segment against dim.
func (r *Replay) LoadFile(path string, dim int) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("control: load replay: %w", err)
	}
	defer f.Close()
	var rf replayFile
	if err := gob.NewDecoder(f).Decode(&rf); err != nil {
		return fmt.Errorf("control: load replay %s: %w", path, err)
	}
	if rf.Version != 1 {
		return fmt.Errorf("control: load replay %s: version %d, want 1", path, rf.Version)
	}
	steps := 0
	for i, s := range rf.Segments {
		if s == nil {
			return fmt.Errorf("control: load replay %s: segment %d is empty", path, i)
		}
		if err := s.Validate(dim); err != nil {
			return fmt.Errorf("control: load replay %s: segment %d: %w", path, i, err)
		}
		steps += s.Len()
	}
	r.segs, r.steps = rf.Segments, steps
	return nil
}
