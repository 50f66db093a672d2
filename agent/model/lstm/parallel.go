package lstm

import (
	"runtime"
	"sync"
)

// parallelMinCells is the number of LSTM cells (rows x Hidden) below which
// the elementwise gate arithmetic runs on the calling goroutine: a hand-off
// to a worker costs a few microseconds, one cell about 30 ns.
const parallelMinCells = 8192

// cellJob is the elementwise part of one LSTM time step over a block of B
// rows, forward or backward. Row b of a slice is [b*W, (b+1)*W) with W = 4H
// for gate slices and H otherwise. It is passed by value, so handing one to
// a worker allocates nothing.
type cellJob struct {
	backward bool
	hidden   int
	forget   float32
	// Row b is active when lengths is nil or t < lengths[b]; inactive rows
	// are zeroed (forward) or receive no gradient (backward).
	t       int
	lengths []int

	// Forward: gates holds pre-activations in and activations out; cPrev
	// may alias c; tc (tanh c) may be nil. Backward: gates holds the
	// activations of Forward, cPrev and tc its cached state.
	gates, cPrev, c, h, tc []float32

	// Forward: when in is set, gates holds h_prev·Wh only and row b first
	// gets the input pre-activations of in for the step's tokens
	// (tokens[b*F:(b+1)*F]) added. Backward: when in is set, the dGates row
	// of each active b is scattered into dProjParts[part], the worker's
	// partial gradient of in.proj (see inputRows.scatterRow).
	in         *inputRows
	tokens     []int32
	dProjParts [][]float32
	part       int

	// Backward only; dcExt may be nil.
	dhExt, dcExt, dhNext, dcNext, dGates []float32

	lo, hi int // the row range a worker runs

	// pureGo forces the Go cell functions even when the vectorised C
	// kernels are built in (tests compare the two).
	pureGo bool
}

func (j *cellJob) active(b int) bool { return j.lengths == nil || j.t < j.lengths[b] }

// run executes rows [lo, hi).
func (j *cellJob) run(lo, hi int) {
	H := j.hidden
	g := func(s []float32, b int) []float32 { return s[b*4*H : (b+1)*4*H] }
	r := func(s []float32, b int) []float32 {
		if s == nil {
			return nil
		}
		return s[b*H : (b+1)*H]
	}
	if haveCellKernel && !j.pureGo {
		j.runKernel(lo, hi)
		return
	}
	if !j.backward {
		for b := lo; b < hi; b++ {
			if !j.active(b) {
				clear(r(j.h, b))
				clear(r(j.c, b))
				clear(r(j.tc, b))
				clear(g(j.gates, b))
				continue
			}
			if j.in != nil {
				F := len(j.in.offs)
				j.in.addRow(g(j.gates, b), j.tokens[b*F:(b+1)*F])
			}
			cell(g(j.gates, b), r(j.cPrev, b), r(j.c, b), r(j.h, b), r(j.tc, b), j.forget)
		}
		return
	}
	for b := lo; b < hi; b++ {
		if !j.active(b) {
			clear(g(j.dGates, b))
			clear(r(j.dcNext, b))
			continue
		}
		cellBackward(g(j.gates, b), r(j.cPrev, b), r(j.tc, b), r(j.dhExt, b), r(j.dcExt, b),
			r(j.dhNext, b), r(j.dcNext, b), g(j.dGates, b))
		if j.in != nil {
			F := len(j.in.offs)
			j.in.scatterRow(j.dProjParts[j.part], g(j.dGates, b), j.tokens[b*F:(b+1)*F])
		}
	}
}

// runKernel is run on the C kernels: inactive rows are cleared here and
// each run of consecutive active rows is one kernel call.
func (j *cellJob) runKernel(lo, hi int) {
	H := j.hidden
	from := func(s []float32, b, w int) []float32 {
		if s == nil {
			return nil
		}
		return s[b*w:]
	}
	for b := lo; b < hi; {
		if !j.active(b) {
			if j.backward {
				clear(j.dGates[b*4*H : (b+1)*4*H])
				clear(j.dcNext[b*H : (b+1)*H])
			} else {
				clear(j.gates[b*4*H : (b+1)*4*H])
				clear(j.c[b*H : (b+1)*H])
				clear(j.h[b*H : (b+1)*H])
				if j.tc != nil {
					clear(j.tc[b*H : (b+1)*H])
				}
			}
			b++
			continue
		}
		e := b + 1
		for e < hi && j.active(e) {
			e++
		}
		if j.backward && j.in != nil {
			F := len(j.in.offs)
			cellsBackwardInputKernel(from(j.gates, b, 4*H), from(j.cPrev, b, H), from(j.tc, b, H), from(j.dhExt, b, H),
				from(j.dcExt, b, H), from(j.dhNext, b, H), from(j.dcNext, b, H), from(j.dGates, b, 4*H), e-b, H,
				j.in, j.tokens[b*F:e*F], j.dProjParts[j.part])
		} else if j.backward {
			cellsBackwardKernel(from(j.gates, b, 4*H), from(j.cPrev, b, H), from(j.tc, b, H), from(j.dhExt, b, H),
				from(j.dcExt, b, H), from(j.dhNext, b, H), from(j.dcNext, b, H), from(j.dGates, b, 4*H), e-b, H)
		} else if j.in != nil {
			F := len(j.in.offs)
			cellsInputKernel(from(j.gates, b, 4*H), from(j.cPrev, b, H), from(j.c, b, H), from(j.h, b, H), from(j.tc, b, H), e-b, H, j.forget,
				j.in, j.tokens[b*F:e*F])
		} else {
			cellsKernel(from(j.gates, b, 4*H), from(j.cPrev, b, H), from(j.c, b, H), from(j.h, b, H), from(j.tc, b, H), e-b, H, j.forget)
		}
		b = e
	}
}

// cellPool runs cellJobs split by rows over a fixed set of worker
// goroutines plus the caller. Calls are serialised by a mutex (concurrent
// callers would compete for the same cores anyway). The workers hold only
// the shared core, so when the owner drops the pool a cleanup closes the
// job channel and they exit.
type cellPool struct {
	mu   sync.Mutex
	core *poolCore
}

type poolCore struct {
	workers int
	jobs    chan cellJob
	wg      sync.WaitGroup
}

// newCellPool returns a pool using GOMAXPROCS goroutines in all, or nil
// (run everything on the caller) when that is 1.
func newCellPool() *cellPool { return newCellPoolOf(runtime.GOMAXPROCS(0)) }

// newCellPoolOf returns a pool of n goroutines in all (the caller and n-1 workers), nil when n < 2.
func newCellPoolOf(n int) *cellPool {
	if n < 2 {
		return nil
	}
	core := &poolCore{workers: n - 1, jobs: make(chan cellJob, n-1)}
	for i := 0; i < core.workers; i++ {
		go core.work()
	}
	p := &cellPool{core: core}
	runtime.AddCleanup(p, func(c *poolCore) { close(c.jobs) }, core)
	return p
}

func (c *poolCore) work() {
	for j := range c.jobs {
		j.run(j.lo, j.hi)
		c.wg.Done()
	}
}

// scatterParts is the number of partial sums of the input-projection gradient that a backward
// job with a scatter (cellJob.in set) splits its rows into, whatever the number of workers: rows
// from different parts add into the same token's gradient, so a partition that followed
// GOMAXPROCS would make the float32 sums, and with them training, depend on the machine. Two
// parts keep the results that 2-core runs gave before the partition was fixed.
const scatterParts = 2

// parts is the number of partial-sum buffers a scatter job needs; job.part is below it.
func (p *cellPool) parts() int { return scatterParts }

// run executes j over rows [0, rows), in parallel when the pool exists and
// the job is large enough. A job that scatters into partial sums is split
// into scatterParts fixed row ranges, run in parallel when there is a pool.
func (p *cellPool) run(j cellJob, rows int) {
	small := rows < 2 || rows*j.hidden < parallelMinCells
	if j.dProjParts != nil && !small {
		p.runParts(j, rows, min(scatterParts, rows))
		return
	}
	if p == nil || small {
		j.run(0, rows)
		return
	}
	p.runParts(j, rows, min(p.core.workers+1, rows))
}

// runParts runs j over rows [0, rows) cut into parts ranges of equal size (the last shorter),
// range k as part k: on the caller and the pool's workers, or all on the caller without a pool.
func (p *cellPool) runParts(j cellJob, rows, parts int) {
	chunk := (rows + parts - 1) / parts
	part := func(k int) cellJob {
		w := j
		w.lo, w.hi, w.part = k*chunk, min((k+1)*chunk, rows), k
		return w
	}
	if p == nil {
		for k := range parts {
			w := part(k)
			w.run(w.lo, w.hi)
		}
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.core
	c.wg.Add(parts - 1)
	for k := 1; k < parts; k++ {
		c.jobs <- part(k)
	}
	w := part(0)
	w.run(w.lo, w.hi)
	c.wg.Wait()
}
