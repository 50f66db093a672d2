package replay

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/episode"
)

// A replay file written by an earlier build (testdata/replay-v1.bin, written when Episode was its
// own struct) still loads to the episodes and priorities that made it, and the current build
// encodes them byte for byte as it did. Runs in progress resume from such files.
func TestReplayFileFromEarlierBuildLoads(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "replay-v1.bin"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := NewEpisodes(10, 0.5, 0.1, "fifo")
	fill(t, want, rand.New(rand.NewPCG(5, 6)), 13)
	got, _ := NewEpisodes(10, 0.5, 0.1, "fifo")
	if err := got.Decode(data, episode.TokenDim); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.items, want.items) || !slices.Equal(got.prio, want.prio) || got.next != want.next {
		t.Fatalf("loaded %+v, want %+v", got.items, want.items)
	}
	enc, err := want.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(enc, data) {
		t.Error("the current build encodes the fixture's episodes differently")
	}
}
