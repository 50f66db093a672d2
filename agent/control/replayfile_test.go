package control

import (
	"path/filepath"
	"reflect"
	"testing"
)

// fixtureSegments are the segments of testdata/replay-v1.gob: every combination of the end flags,
// with and without returns to go, in dim testDim.
func fixtureSegments() []*Segment {
	var out []*Segment
	for i, k := range []struct{ terminated, truncated, rtg bool }{
		{false, false, false}, {true, false, true}, {false, true, true}, {false, false, true},
	} {
		L := 1 + i
		s := &Segment{Obs: make([]float32, (L+1)*testDim), Actions: make([]int32, L), Rewards: make([]float64, L),
			Terminated: k.terminated, Truncated: k.truncated, Iteration: 10 + i}
		for j := range s.Obs {
			s.Obs[j] = float32(j)*0.25 - float32(i)
		}
		for t := range L {
			s.Actions[t], s.Rewards[t] = int32(3*i+t), float64(t)/3-float64(i)
		}
		if k.rtg {
			fillReturnsToGo([]*Segment{s}, 0.9)
		}
		out = append(out, s)
	}
	return out
}

// A replay file written by an earlier build (testdata/replay-v1.gob, written when Segment was its
// own struct in this package) still loads, segment for segment, and the current build writes it
// in a form that loads back to the same segments. Runs in progress resume from such files.
func TestReplayFileFromEarlierBuildLoads(t *testing.T) {
	want := fixtureSegments()
	r, _ := NewReplay(1000)
	if err := r.LoadFile(filepath.Join("testdata", "replay-v1.gob"), testDim); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.segs, want) {
		t.Fatalf("loaded %+v, want %+v", r.segs, want)
	}
	path := filepath.Join(t.TempDir(), "replay.gob")
	if err := r.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	back, _ := NewReplay(1000)
	if err := back.LoadFile(path, testDim); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.segs, want) {
		t.Fatalf("rewritten file loads %+v, want %+v", back.segs, want)
	}
}
