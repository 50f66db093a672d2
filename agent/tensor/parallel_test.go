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
			ParallelRows(n, 16, workers, RowFunc(func(w, lo, hi int) {
				if w < 0 || w >= max(workers, 1) || lo >= hi || (workers > 1 && hi-lo > 16) {
					bad.Store(true)
				}
				for r := lo; r < hi; r++ {
					seen[r].Add(1)
				}
			}))
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

// countJob counts its rows; a job kept by its owner passes through ParallelRows without an
// allocation on one worker.
type countJob struct{ rows int }

func (j *countJob) Rows(_, lo, hi int) { j.rows += hi - lo }

func TestParallelRowsWithAJobAllocatesNothingOnOneWorker(t *testing.T) {
	j := &countJob{}
	if a := testing.AllocsPerRun(10, func() { ParallelRows(100, 16, 1, j) }); a != 0 {
		t.Errorf("%v allocations per pass, want 0", a)
	}
	if j.rows != 100*11 {
		t.Errorf("%d rows run, want %d", j.rows, 100*11)
	}
}
