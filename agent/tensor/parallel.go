package tensor

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// EnvWorkers is the environment variable that sets how many goroutines the per-row passes of the
// learner (the loss's row passes, the sparse output-layer backward) use. Unset, empty or not a
// positive integer: GOMAXPROCS. The results do not depend on it (see ParallelRows).
const EnvWorkers = "SPARSEPCL_WORKERS"

// Workers resolves a worker count: n when n > 0, else SPARSEPCL_WORKERS when it is a positive
// integer, else GOMAXPROCS.
func Workers(n int) int {
	if n > 0 {
		return n
	}
	if v, err := strconv.Atoi(strings.TrimSpace(os.Getenv(EnvWorkers))); err == nil && v > 0 {
		return v
	}
	return runtime.GOMAXPROCS(0)
}

// RowJob is a pass over rows: Rows computes the rows [lo, hi) as worker w.
type RowJob interface{ Rows(worker, lo, hi int) }

// RowFunc is a function as a RowJob. A function handed to ParallelRows escapes to the heap (the
// workers' goroutines may hold it), so a closure allocates at every call; a pass on a training
// step's path is a job kept in its owner's scratch instead, which passes without allocating.
type RowFunc func(worker, lo, hi int)

// Rows calls f.
func (f RowFunc) Rows(worker, lo, hi int) { f(worker, lo, hi) }

// ParallelRows runs job over the rows [0, n) cut into blocks of block rows (the last may be
// shorter), on up to workers goroutines: the caller and workers-1 others started for this call.
// Each block is run by exactly one goroutine, which takes the next unrun block when it finishes
// one, so which worker runs a block depends on timing: the job must compute each row the same way
// whatever worker (0 <= worker < workers) runs it, using the worker number only to pick its
// scratch. Then the results do not depend on the number of workers. With workers <= 1, or a
// single block, everything runs on the caller in order, and nothing is allocated.
func ParallelRows(n, block, workers int, job RowJob) {
	if n <= 0 {
		return
	}
	block = max(block, 1)
	blocks := (n + block - 1) / block
	workers = min(workers, blocks)
	if workers <= 1 {
		job.Rows(0, 0, n)
		return
	}
	var next atomic.Int64
	run := func(w int) {
		for {
			k := int(next.Add(1)) - 1
			if k >= blocks {
				return
			}
			job.Rows(w, k*block, min((k+1)*block, n))
		}
	}
	var wg sync.WaitGroup
	wg.Add(workers - 1)
	for w := 1; w < workers; w++ {
		go func() {
			defer wg.Done()
			run(w)
		}()
	}
	run(0)
	wg.Wait()
}
