package pcl

import (
	"fmt"

	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// The fast path of Evaluate. It computes what evaluateReference computes, up to float rounding,
// in two passes over the rows, each split over Workers goroutines by blocks of rows:
//
//   - the first pass finds each row's policy statistics (soft: max and log-sum-exp, the max from
//     Heads.Range when the product reported it; sparse: the threshold and the support) with the
//     float32 row kernels of package policy, and from them V and the step term; the policy
//     itself is never written out;
//   - after PathLoss, the second pass writes each row's gradient: soft's dense dz in one pass of
//     exps (or, when Heads.ScaledGrad is set, one factor per row over the exps), sparse's only
//     on the support and the taken action (as sparse rows when Heads.SparseGrad is set).
//
// The per-row work of each pass is a method of the algorithm (Algorithm.fastValue and fastGrad,
// in soft.go, sparse.go and tsallis.go); this file is the driver. Tsallis PCL (any other entropic
// index) keeps the reference's per-row functions, run in parallel. Every row is computed the same
// way whatever goroutine runs it, and nothing is summed across rows here, so the result does not
// depend on the number of workers.

// rowBlock is the number of rows a worker takes at a time.
const rowBlock = 16

// rowState is what the first pass keeps of a row for the second.
type rowState struct {
	// soft: m the row maximum, inv 1/sum exp(z - m), lse the log-sum-exp.
	// sparse: m the row maximum, ts the shifted threshold (G = ts + m), support in
	// work[wk].sup[off:off+n].
	m, ts  float64
	inv    float32
	wk     int32
	off, n int32
}

// rowWork is one worker's scratch.
type rowWork struct {
	scratch, dz []float32
	idx, sup    []int32
	bad         bool
}

type fastState struct {
	rows []rowState
	work []rowWork
	// counts and offsets of the sparse rows written to Heads.SparseGrad.
	nnz []int
	// the two passes over the rows, kept here so that passing them allocates nothing
	value valueJob
	grad  gradJob
	// exps is head 0's gradient matrix, sized, when the first pass may leave per-row work in it
	// for the second (soft PCL's exponentials); nil when the gradient is not wanted or goes to
	// a sparse sink.
	exps *tensor.Matrix
	// scaled is Heads.ScaledGrad while the gradient pass fills it (soft PCL over exps), nil when
	// head 0's gradient is written out.
	scaled *nn.RowScaled
	// last head 0 of the fast path, for Objective.Probs.
	head0 *tensor.Matrix
	probs []float32
}

func (o *Objective) evaluateFast(heads []*tensor.Matrix, s Steps, dHeads []*tensor.Matrix) (float64, error) {
	m := o.Heads
	alg := m.Algo
	T, B, K := s.T, s.B, m.NumActions()
	Tn := T + 1
	if err := checkSteps(s, K); err != nil {
		return 0, err
	}
	fs := &o.fast
	fs.head0 = nil
	workers := tensor.Workers(o.Workers)
	o.prepareFast(workers, Tn*B, K)
	dense := alg.densePolicy()
	in := o.resetInputs(s)
	scale := m.logitScale()
	if dHeads != nil && len(dHeads) != len(heads) {
		return 0, fmt.Errorf("pcl: %d head gradients for %d heads", len(dHeads), len(heads))
	}
	fs.exps = nil
	if dHeads != nil && !m.TakesSparseGrad() {
		fs.exps = dHeads[0]
		fs.exps.Reshape(heads[0].Rows, heads[0].Cols)
	}
	fs.value = valueJob{o: o, heads: heads, s: s, scale: scale}
	tensor.ParallelRows(Tn*B, rowBlock, workers, &fs.value)
	fs.value = valueJob{}
	for _, wk := range fs.work[:workers] {
		if wk.bad {
			// A NaN or infinite output: the reference defines what the loss and gradient are.
			return o.evaluateReference(heads, s, dHeads)
		}
	}
	o.addTrustShifts(in)
	var g *PathGrads
	if dHeads != nil {
		g = &o.grads
	}
	loss, err := PathLoss(*in, o.Gamma, o.Rollout, g)
	if !dense {
		fs.head0 = heads[0]
	}
	if err != nil || dHeads == nil {
		return loss, err
	}
	o.gradientPass(heads, s, dHeads, g, workers, scale)
	return loss, nil
}

// checkSteps checks each sequence's length and taken actions against the T and K of the batch.
func checkSteps(s Steps, K int) error {
	for b := range s.B {
		L := s.Lengths[b]
		if L < 1 || L > s.T {
			return fmt.Errorf("pcl: sequence %d has length %d, want 1..%d", b, L, s.T)
		}
		for t := range L {
			if a := int(s.Actions[t*s.B+b]); a < 0 || a >= K {
				return fmt.Errorf("pcl: sequence %d: action %d at step %d outside [0, %d)", b, a, t, K)
			}
		}
	}
	return nil
}

// action is the taken action of a row before its sequence's end, -1 at the bootstrap row.
func (s Steps) action(row int) int {
	if t, b := row/s.B, row%s.B; t < s.Lengths[b] {
		return int(s.Actions[row])
	}
	return -1
}

// prepareFast sizes the fast path's row states and the workers' scratch for rows rows of K
// actions (and the dense arrays of an algorithm that writes its policy out).
func (o *Objective) prepareFast(workers, rows, K int) {
	fs := &o.fast
	fs.rows = grow(fs.rows, rows)
	if len(fs.work) < workers {
		fs.work = append(fs.work, make([]rowWork, workers-len(fs.work))...)
	}
	for w := range fs.work[:workers] {
		wk := &fs.work[w]
		wk.scratch, wk.idx, wk.dz = grow(wk.scratch, K), grow(wk.idx, K), grow(wk.dz, K)
		wk.sup, wk.bad = wk.sup[:0], false
	}
	if o.Heads.Algo.densePolicy() {
		o.z = grow(o.z, rows*K)
		o.p = grow(o.p, rows*K)
		o.tau = grow(o.tau, rows)
	}
}

// gradientPass is the fast path's second pass: each row's head gradients from the path
// gradients g, head 0's as sparse rows into Heads.SparseGrad when the algorithm and the sink
// allow it.
func (o *Objective) gradientPass(heads []*tensor.Matrix, s Steps, dHeads []*tensor.Matrix, g *PathGrads, workers int, scale float32) {
	m, fs := o.Heads, &o.fast
	B := s.B
	sink := m.SparseGrad
	if !m.TakesSparseGrad() {
		sink = nil
	}
	for i, h := range heads {
		if i == 0 && sink != nil {
			dHeads[0].Reshape(0, h.Cols)
			continue
		}
		dHeads[i].Reshape(h.Rows, h.Cols)
		if i != 0 {
			dHeads[i].Zero()
		}
	}
	fs.scaled = nil
	if m.ScaledGrad != nil && m.TakesScaledGrad() && fs.exps != nil {
		fs.scaled = m.ScaledGrad
		fs.scaled.Reset(heads[0].Rows)
	}
	fs.grad = gradJob{o: o, heads: heads, dHeads: dHeads, s: s, g: g, sink: sink, ps: o.PolicyScale(), cw: o.CriticWeight, scale: scale}
	if sink != nil {
		sparseOffsets(o, heads, s, sink, &fs.grad, scale)
	}
	tensor.ParallelRows((s.T+1)*B, rowBlock, workers, &fs.grad)
	fs.grad = gradJob{}
	fs.scaled = nil
}

// valueJob is the fast path's first pass (a tensor.RowJob): each row's support or
// normaliser, and V.
type valueJob struct {
	o     *Objective
	heads []*tensor.Matrix
	s     Steps
	scale float32
}

func (j *valueJob) Rows(w, lo, hi int) {
	o, s := j.o, j.s
	wk, alg, B := &o.fast.work[w], o.Heads.Algo, s.B
	for row := lo; row < hi; row++ {
		if t, b := row/B, row%B; t > s.Lengths[b] {
			continue
		}
		if !alg.fastValue(o, wk, w, j.heads, row, s.action(row), j.scale) {
			wk.bad = true
		}
	}
}

// gradJob is the fast path's second pass (a tensor.RowJob): each row's head gradients from the
// path gradients g, head 0's into sink when it is not nil.
type gradJob struct {
	o             *Objective
	heads, dHeads []*tensor.Matrix
	s             Steps
	g             *PathGrads
	sink          *nn.SparseRows
	ps, cw        float64 // the policy scale and the critic weight
	scale         float32
}

// weights returns the step weight (0 at a bootstrap row) and the value weight of a row.
func (j *gradJob) weights(row int) (w, dv float64) {
	t, b := row/j.s.B, row%j.s.B
	if t < j.s.Lengths[b] {
		w = j.g.DTerms[row] * j.ps
	}
	return w, j.g.DValues[row] * j.cw
}

func (j *gradJob) Rows(w, lo, hi int) {
	o, s := j.o, j.s
	wk, alg, B := &o.fast.work[w], o.Heads.Algo, s.B
	for row := lo; row < hi; row++ {
		t, b := row/B, row%B
		var d []float32
		if j.sink == nil {
			d = j.dHeads[0].Row(row)
		}
		if t > s.Lengths[b] {
			clear(d)
			continue
		}
		wt, dv := j.weights(row)
		alg.fastGrad(o, wk, j.heads, j.dHeads, j.sink, row, s.action(row), wt, dv, d, j.scale)
	}
}
