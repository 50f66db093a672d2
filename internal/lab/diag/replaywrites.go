package diag

import (
	"github.com/sparsepcl/sparsepcl/agent/episode"
	"github.com/sparsepcl/sparsepcl/agent/replay"
)

// Writes is what a replay buffer holds of one symbol's rewarded writes.
type Writes struct {
	Symbol   int
	Episodes int     // stored episodes
	Holding  int     // of them, those with a rewarded write of Symbol
	MeanLen  float64 // their mean length (0 when none)
	// Mass is their share of the buffer's sampling distribution, and Uniform their share of the
	// episodes (what a uniform replay gives them).
	Mass, Uniform float64
}

// ReplayWrites counts the episodes of buf that hold a rewarded write of symbol and the share of
// the replay's draws they get: whether the rare correct writes an exploring run makes are kept
// and replayed.
func ReplayWrites(buf *replay.Buffer[int32], task Task, symbol int) Writes {
	w := Writes{Symbol: symbol}
	var holds []bool
	total := 0
	buf.Count(func(e *episode.Episode) bool {
		h := false
		for t, a := range e.Actions {
			if wr, ch := task.Write(int(a)); wr && ch == symbol && e.Rewards[t] > 0 {
				h = true
				break
			}
		}
		holds = append(holds, h)
		if h {
			total += e.Len()
		}
		return false
	})
	w.Episodes = len(holds)
	for i, p := range buf.Probabilities() {
		if holds[i] {
			w.Holding++
			w.Mass += p
		}
	}
	if w.Holding > 0 {
		w.MeanLen = float64(total) / float64(w.Holding)
	}
	if w.Episodes > 0 {
		w.Uniform = float64(w.Holding) / float64(w.Episodes)
	}
	return w
}
