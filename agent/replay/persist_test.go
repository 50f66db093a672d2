package replay

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/episode"
)

// fill adds n episodes of varied lengths to b (overflowing capacity exercises eviction).
func fill(t *testing.T, b *Buffer[int32], rng *rand.Rand, n int) {
	t.Helper()
	for i := range n {
		L := 1 + i%5
		e := &episode.Episode{Obs: make([]int32, L+1), Actions: make([]int32, L), Rewards: make([]float64, L), Terminated: i%2 == 0, Truncated: i%2 != 0, Iteration: i}
		for k := range L {
			e.Obs[k+1], e.Actions[k], e.Rewards[k] = int32(i+k), int32(7*i+k), float64(k)-0.5*float64(i%3)
		}
		if err := b.Add(rng, e, float64(i%7)-2.25); err != nil {
			t.Fatal(err)
		}
	}
}

// A buffer saved and loaded into a fresh one of the same configuration encodes identically and then
// behaves identically: same samples, same evictions, for both eviction rules.
func TestSaveLoadContinuesExactly(t *testing.T) {
	for _, tc := range []struct {
		eviction string
		added    int
	}{{"random", 0}, {"random", 5}, {"random", 23}, {"fifo", 23}} {
		orig, _ := NewEpisodes(10, 0.5, 0.1, tc.eviction)
		fill(t, orig, rand.New(rand.NewPCG(1, 2)), tc.added)
		path := filepath.Join(t.TempDir(), "replay.bin")
		if err := orig.SaveFile(path); err != nil {
			t.Fatal(err)
		}
		loaded, _ := NewEpisodes(10, 0.5, 0.1, tc.eviction)
		if err := loaded.LoadFile(path, episode.TokenDim); err != nil {
			t.Fatalf("%s/%d: %v", tc.eviction, tc.added, err)
		}
		r1, r2 := rand.New(rand.NewPCG(3, 4)), rand.New(rand.NewPCG(3, 4))
		fill(t, orig, r1, 7)
		fill(t, loaded, r2, 7)
		a, b := orig.Sample(r1, 6), loaded.Sample(r2, 6)
		for i := range a {
			if !slices.Equal(a[i].Actions, b[i].Actions) || !slices.Equal(a[i].Rewards, b[i].Rewards) || !slices.Equal(a[i].Obs, b[i].Obs) ||
				a[i].Terminated != b[i].Terminated || a[i].Iteration != b[i].Iteration {
				t.Errorf("%s/%d: sample %d differs after load: %+v vs %+v", tc.eviction, tc.added, i, a[i], b[i])
			}
		}
		ea, _ := orig.MarshalBinary()
		eb, _ := loaded.MarshalBinary()
		if !slices.Equal(ea, eb) {
			t.Errorf("%s/%d: states differ after identical continuations", tc.eviction, tc.added)
		}
		if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
			t.Errorf("%s/%d: the atomic save left %d files, want 1", tc.eviction, tc.added, len(entries))
		}
	}
}

func TestLoadRejectsBadData(t *testing.T) {
	src, _ := NewEpisodes(10, 0.5, 0.1, "random")
	fill(t, src, rand.New(rand.NewPCG(1, 1)), 4)
	good, err := src.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	flipped := slices.Clone(good)
	flipped[30] ^= 1
	version := slices.Clone(good)
	version[8] = 9
	tests := []struct {
		name     string
		data     []byte
		capacity int
		eviction string
		format   bool // an ErrFormat error
	}{
		{"empty", nil, 10, "random", true},
		{"not a buffer", []byte("SPCLCKPT and more bytes"), 10, "random", true},
		{"future version", version, 10, "random", true},
		{"corrupt byte", flipped, 10, "random", true},
		{"truncated", good[:len(good)-9], 10, "random", true},
		{"other capacity", good, 20, "random", false},
		{"other eviction", good, 10, "fifo", false},
	}
	for _, tc := range tests {
		b, _ := NewEpisodes(tc.capacity, 0.5, 0.1, tc.eviction)
		fill(t, b, rand.New(rand.NewPCG(5, 5)), 2)
		before, _ := b.MarshalBinary()
		err := b.Decode(tc.data, episode.TokenDim)
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		if errors.Is(err, ErrFormat) != tc.format {
			t.Errorf("%s: error %v, ErrFormat %v, want %v", tc.name, err, errors.Is(err, ErrFormat), tc.format)
		}
		if after, _ := b.MarshalBinary(); !slices.Equal(before, after) {
			t.Errorf("%s: a failed load changed the buffer", tc.name)
		}
	}
	if err := src.LoadFile(filepath.Join(t.TempDir(), "missing.bin"), episode.TokenDim); err == nil {
		t.Error("missing file accepted")
	}
}

// SaveFile replaces the file atomically (agent/atomicfile): no temporary file is left,
// the file is world-readable, and a save into a missing directory names the path.
func TestSaveFileLeavesOnlyTheFile(t *testing.T) {
	b, _ := NewEpisodes(10, 0.5, 0.1, "fifo")
	fill(t, b, rand.New(rand.NewPCG(3, 4)), 4)
	dir := t.TempDir()
	path := filepath.Join(dir, "replay.bin")
	for range 2 {
		if err := b.SaveFile(path); err != nil {
			t.Fatal(err)
		}
	}
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Name() != "replay.bin" {
		t.Fatalf("directory holds %v, want only replay.bin", es)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("stat: %v, %v; want mode 0644", st, err)
	}
	missing := filepath.Join(dir, "gone", "replay.bin")
	if err := b.SaveFile(missing); err == nil || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "replay: save: ") || !strings.Contains(err.Error(), missing) {
		t.Fatalf("error %v, want a replay save error naming %s", err, missing)
	}
}
