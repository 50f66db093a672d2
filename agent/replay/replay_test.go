package replay

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/episode"
)

func ep(id int) *episode.Episode {
	return &episode.Episode{Obs: []int32{0, 0}, Actions: []int32{int32(id)}, Rewards: []float64{float64(id)}, Terminated: true}
}

func TestProbabilitiesFollowPaperMixture(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	b, err := NewEpisodes(10, 0.5, 0.1, "random")
	if err != nil {
		t.Fatal(err)
	}
	prios := []float64{0, 1, 2, 4}
	for i, pr := range prios {
		if err := b.Add(rng, ep(i), pr); err != nil {
			t.Fatal(err)
		}
	}
	z := 0.0
	for _, pr := range prios {
		z += math.Exp(0.5 * pr)
	}
	p := b.Probabilities()
	sum := 0.0
	for i, pr := range prios {
		want := 0.1/4 + 0.9*math.Exp(0.5*pr)/z
		if math.Abs(p[i]-want) > 1e-12 {
			t.Errorf("p[%d] = %v, want %v", i, p[i], want)
		}
		sum += p[i]
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("probabilities sum to %v", sum)
	}
}

func TestSampleFrequenciesMatchProbabilities(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	b, _ := NewEpisodes(5, 0.5, 0.1, "random")
	for i := 0; i < 5; i++ {
		_ = b.Add(rng, ep(i), float64(2*i))
	}
	p := b.Probabilities()
	counts := make([]float64, 5)
	const draws = 40000
	for i := 0; i < draws; i++ {
		s := b.Sample(rng, 1)
		counts[s[0].Actions[0]]++
	}
	for i := range counts {
		f := counts[i] / draws
		if sd := math.Sqrt(p[i] * (1 - p[i]) / draws); math.Abs(f-p[i]) > 5*sd {
			t.Errorf("episode %d drawn with frequency %v, probability %v", i, f, p[i])
		}
	}
	// Without replacement: a full draw returns every episode once.
	all := b.Sample(rng, 99)
	seen := map[int32]bool{}
	for _, e := range all {
		seen[e.Actions[0]] = true
	}
	if len(all) != 5 || len(seen) != 5 {
		t.Fatalf("sample of all returned %d episodes, %d distinct", len(all), len(seen))
	}
}

func TestEviction(t *testing.T) {
	for _, mode := range []string{"random", "fifo"} {
		rng := rand.New(rand.NewPCG(3, 3))
		b, _ := NewEpisodes(4, 0.5, 0.1, mode)
		for i := 0; i < 10; i++ {
			_ = b.Add(rng, ep(i), 0)
		}
		if b.Len() != 4 {
			t.Fatalf("%s: len %d after 10 adds at capacity 4", mode, b.Len())
		}
		ids := map[int32]bool{}
		for _, e := range b.items {
			ids[e.Actions[0]] = true
		}
		if !ids[9] {
			t.Errorf("%s: last added episode was evicted immediately: %v", mode, ids)
		}
		if mode == "fifo" && !(ids[6] && ids[7] && ids[8] && ids[9]) {
			t.Errorf("fifo keeps %v, want 6..9", ids)
		}
	}
}

func TestBadArguments(t *testing.T) {
	if _, err := NewEpisodes(0, 0.5, 0.1, "random"); err == nil {
		t.Error("capacity 0 accepted")
	}
	if _, err := NewEpisodes(5, 0.5, 1.5, "random"); err == nil {
		t.Error("uniform 1.5 accepted")
	}
	if _, err := NewEpisodes(5, 0.5, 0.1, "lru"); err == nil {
		t.Error("eviction lru accepted")
	}
	b, _ := NewEpisodes(5, 0.5, 0.1, "random")
	if err := b.Add(rand.New(rand.NewPCG(1, 1)), ep(0), math.NaN()); err == nil {
		t.Error("NaN priority accepted")
	}
}

// The buffer keeps whole episodes: one that was cut (neither terminated nor truncated), or is
// both, is refused, so that the file's one end flag restores both.
func TestAddRefusesAPartialEpisode(t *testing.T) {
	b, _ := NewEpisodes(4, 0.5, 0.1, "random")
	rng := rand.New(rand.NewPCG(1, 2))
	for _, ends := range [][2]bool{{false, false}, {true, true}} {
		e := ep(1)
		e.Terminated, e.Truncated = ends[0], ends[1]
		if err := b.Add(rng, e, 0); err == nil {
			t.Errorf("terminated %v truncated %v: no error", ends[0], ends[1])
		}
	}
	if b.Len() != 0 {
		t.Errorf("refused episodes were stored: %d", b.Len())
	}
}
