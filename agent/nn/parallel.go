package nn

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
func newCellPool() *cellPool {
	n := runtime.GOMAXPROCS(0)
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

// parts is the most row ranges run splits a job into (1 without a pool);
// job.part is below it.
func (p *cellPool) parts() int {
	if p == nil {
		return 1
	}
	return p.core.workers + 1
}

// run executes j over rows [0, rows), in parallel when the pool exists and
// the job is large enough.
func (p *cellPool) run(j cellJob, rows int) {
	if p == nil || rows < 2 || rows*j.hidden < parallelMinCells {
		j.run(0, rows)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.core
	parts := min(c.workers+1, rows)
	chunk := (rows + parts - 1) / parts
	c.wg.Add(parts - 1)
	for k := 1; k < parts; k++ {
		w := j
		w.lo, w.hi, w.part = k*chunk, min((k+1)*chunk, rows), k
		c.jobs <- w
	}
	j.run(0, min(chunk, rows))
	c.wg.Wait()
}
