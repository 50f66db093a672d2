package collect

import "fmt"

// statWindow keeps the policy statistics of the last size drawn steps.
type statWindow struct {
	maxProb, support []float32
	next, filled     int
}

// WindowState is a statistics window's contents, oldest first (a checkpoint keeps it).
type WindowState struct {
	MaxProb []float32 `json:"max_prob"`
	Support []float32 `json:"support"`
}

func newStatWindow(size int) statWindow {
	return statWindow{maxProb: make([]float32, size), support: make([]float32, size)}
}

func (w *statWindow) add(maxProb, support float32) {
	w.maxProb[w.next], w.support[w.next] = maxProb, support
	w.next = (w.next + 1) % len(w.maxProb)
	w.filled = min(w.filled+1, len(w.maxProb))
}

func (w *statWindow) means() (float64, float64) {
	if w.filled == 0 {
		return 0, 0
	}
	var a, b float64
	for i := range w.filled {
		a += float64(w.maxProb[i])
		b += float64(w.support[i])
	}
	return a / float64(w.filled), b / float64(w.filled)
}

func (w *statWindow) state() WindowState {
	var st WindowState
	size := len(w.maxProb)
	start := (w.next - w.filled + size) % size
	for k := range w.filled {
		j := (start + k) % size
		st.MaxProb = append(st.MaxProb, w.maxProb[j])
		st.Support = append(st.Support, w.support[j])
	}
	return st
}

func (w *statWindow) restore(st WindowState) error {
	if len(st.MaxProb) != len(st.Support) || len(st.MaxProb) > len(w.maxProb) {
		return fmt.Errorf("collect: statistics window of %d and %d entries, want equal and <= %d", len(st.MaxProb), len(st.Support), len(w.maxProb))
	}
	copy(w.maxProb, st.MaxProb)
	copy(w.support, st.Support)
	w.filled = len(st.MaxProb)
	w.next = w.filled % len(w.maxProb)
	return nil
}
