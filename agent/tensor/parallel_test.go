package tensor

import (
	"sync/atomic"
	"testing"
)

// ParallelRows runs every row exactly once, in blocks, with worker numbers below workers.
func TestParallelRowsCoversEveryRowOnce(t *testing.T) {
	for _, n := range []int{0, 1, 15, 16, 17, 1000} {
		for _, workers := range []int{0, 1, 2, 5} {
			seen := make([]atomic.Int32, n)
			var bad atomic.Bool
			ParallelRows(n, 16, workers, func(w, lo, hi int) {
				if w < 0 || w >= max(workers, 1) || lo >= hi || (workers > 1 && hi-lo > 16) {
					bad.Store(true)
				}
				for r := lo; r < hi; r++ {
					seen[r].Add(1)
				}
			})
			if bad.Load() {
				t.Errorf("n=%d workers=%d: a bad block or worker number", n, workers)
			}
			for r := range seen {
				if c := seen[r].Load(); c != 1 {
					t.Fatalf("n=%d workers=%d: row %d run %d times", n, workers, r, c)
				}
			}
		}
	}
	if Workers(3) != 3 {
		t.Error("Workers(3) != 3")
	}
	t.Setenv(EnvWorkers, "4")
	if Workers(0) != 4 {
		t.Errorf("Workers(0) with %s=4 is %d", EnvWorkers, Workers(0))
	}
}
