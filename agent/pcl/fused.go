package pcl

import (
	"fmt"

	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// The fused output layer (Learner.Fused). A training step of a network whose logits are one
// affine layer over a trunk (FusedNetwork) can run that layer, the policy, the consistencies and
// the layer's backward pass one block of whole sequences at a time, so that the (T+1)·B × |A|
// logits (158 MB at 5^6) and their gradient are never written out whole: per block, the lagged
// layer's logits and the trust region's shifts, the online logits, the block's Objective
// (a row's consistency needs the d rows after it, all within its sequence) and the block's
// contributions to dW, db and to the gradient of the layer's input. Blocks are spread over
// fusedLanes lanes (block k on lane k mod lanes), each lane summing its blocks' dW in block order
// into its own partial; the partials are added to the layer's gradient in lane order, so the bits
// do not depend on how many goroutines run the lanes.
//
// Every per-row quantity (logits, policy, V, step terms, the path gradients, each row's logit
// gradient and its gradient to the trunk) is computed as the unfused step computes it; the sums
// over rows (dW, db, the loss) are taken in another order, so the step differs from the unfused
// one at float rounding, whatever the engine.

// FusedNetwork is a network whose head 0 (the logits) is one affine layer over the rows of a
// trunk output, which the learner can then run by blocks of sequences.
type FusedNetwork[T any] interface {
	Network[T]
	// ForwardTrunk is ForwardBatch without head 0 (left at 0 rows): it returns the input rows of
	// the logit layer ((T+1)*B, time-major, owned by the network until its next forward) and
	// every other head.
	ForwardTrunk(batch []T) (x *tensor.Matrix, heads []*tensor.Matrix, s Steps, err error)
	// LogitLayer is the layer that makes head 0 from x.
	LogitLayer() *nn.Linear
	// BackwardTrunk accumulates the parameter gradients of the head gradients dHeads (head 0
	// ignored) and of dx, the gradient at the logit layer's input, for the last ForwardTrunk.
	BackwardTrunk(dHeads []*tensor.Matrix, dx *tensor.Matrix) error
	// SparseGradLimit is the share of non-zero entries of a sparse logit gradient above which it
	// is passed through the layer densely.
	SparseGradLimit() float64
}

// fusedLanes is the number of partial gradients of the fused blocks: at least the cores the
// machine runs one training step on. It fixes the order of the sums, so it must not follow the
// thread count.
const fusedLanes = 4

// fusedBlockCells is the target size of one block's logits (rows × actions): 2 MB, a few times
// an L2 cache; a block holds at least one sequence (6.3 MB at 5^6).
const fusedBlockCells = 1 << 19

// fusedState is the fused step's scratch, kept by the learner.
type fusedState struct {
	lanes   []*fusedLane
	laggedX *tensor.Matrix // the lagged trunk's output rows, from bootstrapValues
	dx      *tensor.Matrix // the gradient at the logit layer's input
	loss    []float64      // per block
	job     fusedJob
}

// fusedLane is one lane's scratch: its own objective, layer lanes and block matrices.
type fusedLane struct {
	obj            Objective
	heads          Heads
	online, lagged *nn.Linear
	x, xl          *tensor.Matrix
	bheads, dheads []*tensor.Matrix
	lheads         []*tensor.Matrix
	steps          Steps
	targets        []float64
	rows           nn.SparseRows
	scaled         nn.RowScaled
	dense, dx      *tensor.Matrix
	err            error
}

// fusedJob runs the lanes (a tensor.RowJob over lanes).
type fusedJob struct {
	run func(lane int)
}

func (j *fusedJob) Rows(_, lo, hi int) {
	for lane := lo; lane < hi; lane++ {
		j.run(lane)
	}
}

// fusedNetwork returns the model as a FusedNetwork when the learner fuses its output layer.
func (l *Learner[T, N]) fusedNetwork() (FusedNetwork[T], bool) {
	if !l.Fused || l.Model.Layout().VHead < 0 {
		return nil, false
	}
	f, ok := any(l.Model).(FusedNetwork[T])
	return f, ok
}

// newFusedLane makes a lane over the logit layer and, with a lagged network, its lagged values.
func (l *Learner[T, N]) newFusedLane(layer *nn.Linear) *fusedLane {
	ln := &fusedLane{online: layer.Lane(nil, nil), x: tensor.New(0, layer.In), xl: tensor.New(0, layer.In),
		dense: tensor.New(0, layer.Out), dx: tensor.New(0, layer.In), lheads: make([]*tensor.Matrix, 1)}
	if l.target != nil {
		var w, b *tensor.Matrix
		for i, p := range l.Model.Params() {
			switch p {
			case layer.W:
				w = l.target.params[i].Value
			case layer.B:
				b = l.target.params[i].Value
			}
		}
		ln.lagged = layer.Lane(w, b)
	}
	for _, s := range l.Model.Layout().Sizes {
		ln.bheads = append(ln.bheads, tensor.New(0, s))
		ln.dheads = append(ln.dheads, tensor.New(0, s))
	}
	return ln
}

// fusedScratch is the fused step's scratch, made at its first use for a trunk of cols outputs.
func (l *Learner[T, N]) fusedScratch(cols int) *fusedState {
	if l.fused == nil {
		l.fused = &fusedState{dx: tensor.New(0, cols), laggedX: tensor.New(0, cols)}
	}
	return l.fused
}

// fusedBootstrap is bootstrapValues on the fused path: the lagged network's trunk alone, whose
// output rows the blocks turn into the lagged logits and the trust region's shifts.
func (l *Learner[T, N]) fusedBootstrap(f FusedNetwork[T], batch []T) ([]float64, error) {
	t := l.target
	online := l.Model.Params()
	t.swap(online)
	x, heads, steps, err := f.ForwardTrunk(batch)
	if err == nil {
		lx := l.fusedScratch(x.Cols).laggedX
		lx.Reshape(x.Rows, x.Cols)
		copy(lx.Data, x.Data)
		err = t.readValues(&l.obj, heads, steps)
	}
	t.swap(online)
	if err != nil {
		return nil, fmt.Errorf("pcl: lagged network: %w", err)
	}
	return t.values, nil
}

// fusedLoss is Loss with gradients on the fused path; targets are the lagged bootstrap values (nil
// without a lagged network).
func (l *Learner[T, N]) fusedLoss(f FusedNetwork[T], batch []T, targets []float64) (StepInfo, error) {
	x, heads, s, err := f.ForwardTrunk(batch)
	if err != nil {
		return StepInfo{}, err
	}
	l.phase("trunk")
	layout := l.Model.Layout()
	tMax, B, K := s.T, s.B, layout.NumActions()
	Tn := tMax + 1
	if err := checkSteps(s, K); err != nil {
		return StepInfo{}, err
	}
	if x.Rows != Tn*B {
		return StepInfo{}, fmt.Errorf("pcl: fused: trunk output %s for (T+1)*B = %d rows", x.Shape(), Tn*B)
	}
	fs := l.fusedScratch(x.Cols)
	layer := f.LogitLayer()
	perBlock := max(1, fusedBlockCells/(Tn*K))
	if l.FusedBlock > 0 {
		perBlock = l.FusedBlock
	}
	blocks := (B + perBlock - 1) / perBlock
	lanes := min(fusedLanes, blocks)
	for len(fs.lanes) < lanes {
		fs.lanes = append(fs.lanes, l.newFusedLane(layer))
	}
	for _, ln := range fs.lanes { // the values changed with the last optimiser step
		ln.online.Refresh()
		if ln.lagged != nil {
			ln.lagged.Refresh()
		}
	}
	fs.loss = grow(fs.loss, blocks)
	fs.dx.Reshape(Tn*B, x.Cols)
	for i, h := range heads {
		if i == 0 {
			continue
		}
		l.dHeads[i].Reshape(h.Rows, h.Cols)
		l.dHeads[i].Zero()
	}
	l.dHeads[0].Reshape(0, K)
	in := l.obj.resetInputs(s) // V and the step terms, for the diagnostics
	l.obj.fast.head0 = nil
	nn.ZeroGrads(l.Params())
	limit := f.SparseGradLimit()
	fs.job.run = func(lane int) {
		ln := fs.lanes[lane]
		ln.err = nil
		ln.online.ZeroLaneGrads()
		for k := lane; k < blocks && ln.err == nil; k += lanes {
			fs.loss[k], ln.err = l.fusedBlock(ln, x, heads, s, targets, k*perBlock, min(B, (k+1)*perBlock), in, limit)
		}
	}
	tensor.ParallelRows(lanes, 1, tensor.Workers(l.obj.Workers), &fs.job)
	fs.job.run = nil
	loss := 0.0
	for k := range blocks {
		loss += fs.loss[k]
	}
	n := 0
	for _, L := range s.Lengths {
		n += L
	}
	info := StepInfo{Loss: loss, Episodes: len(batch), Steps: n}
	for _, ln := range fs.lanes[:lanes] {
		if ln.err != nil {
			return info, ln.err
		}
	}
	l.phase("blocks")
	for _, ln := range fs.lanes[:lanes] {
		layer.AddLaneGrads(ln.online)
	}
	if err := f.BackwardTrunk(l.dHeads, fs.dx); err != nil {
		return info, fmt.Errorf("pcl: backward: %w", err)
	}
	l.phase("backward")
	return info, nil
}

// fusedBlock runs sequences [b0, b1) of s through lane ln: the lagged logits and shifts, the
// online logits, the block's objective and the logit layer's backward pass; it writes the block's
// rows of the gradient at the layer's input, of the other heads' gradients and of in's V and
// step terms, and returns the block's share of the loss.
func (l *Learner[T, N]) fusedBlock(ln *fusedLane, x *tensor.Matrix, heads []*tensor.Matrix, s Steps, targets []float64, b0, b1 int, in *PathInputs, limit float64) (float64, error) {
	layout := l.Model.Layout()
	tMax, B, n := s.T, s.B, b1-b0
	Tn := tMax + 1
	st := &ln.steps
	*st = Steps{T: tMax, B: n, Lengths: append(st.Lengths[:0], s.Lengths[b0:b1]...), Terminated: append(st.Terminated[:0], s.Terminated[b0:b1]...),
		Actions: grow(st.Actions, tMax*n), Rewards: grow(st.Rewards, tMax*n)}
	for t := range tMax {
		copy(st.Actions[t*n:(t+1)*n], s.Actions[t*B+b0:t*B+b1])
		copy(st.Rewards[t*n:(t+1)*n], s.Rewards[t*B+b0:t*B+b1])
	}
	gatherRows(ln.x, x, tMax, B, b0, b1)
	for i, h := range heads {
		if i != 0 {
			gatherRows(ln.bheads[i], h, tMax, B, b0, b1)
		}
	}
	// The block's logit gradient takes the form the network takes for a whole batch (sparse
	// rows, row factors or dense), into the lane's own sink.
	ln.heads = *layout
	ln.heads.Range = nil
	if layout.SparseGrad != nil {
		ln.heads.SparseGrad = &ln.rows
	}
	if layout.ScaledGrad != nil {
		ln.heads.ScaledGrad = &ln.scaled
	}
	obj := &ln.obj
	// The lane's objective is the learner's, over the block, averaged over the whole batch; it
	// keeps its own scratch from block to block.
	obj.Heads, obj.Gamma, obj.Rollout, obj.CriticWeight = &ln.heads, l.obj.Gamma, l.obj.Rollout, l.obj.CriticWeight
	obj.InverseAlpha, obj.Workers, obj.Episodes, obj.Targets = l.obj.InverseAlpha, 1, B, nil
	obj.trust.Lambda = l.obj.trust.Lambda
	if targets != nil {
		ln.targets = grow(ln.targets, Tn*n)
		for t := range Tn {
			copy(ln.targets[t*n:(t+1)*n], targets[t*B+b0:t*B+b1])
		}
		obj.Targets = ln.targets
	}
	if obj.trust.Lambda > 0 {
		gatherRows(ln.xl, l.fused.laggedX, tMax, B, b0, b1)
		zl, err := ln.lagged.Forward(ln.xl)
		if err != nil {
			return 0, fmt.Errorf("pcl: fused lagged logits: %w", err)
		}
		ln.lheads[0] = zl
		if err := obj.trust.laggedShifts(layout, ln.lheads, *st, 1); err != nil {
			return 0, fmt.Errorf("pcl: lagged network: %w", err)
		}
	}
	z, err := ln.online.Forward(ln.x)
	if err != nil {
		return 0, fmt.Errorf("pcl: fused logits: %w", err)
	}
	ln.bheads[0] = z
	loss, err := obj.Evaluate(ln.bheads, *st, ln.dheads)
	if err != nil {
		return loss, err
	}
	ln.dx.Reshape(Tn*n, ln.online.In)
	if err := ln.backwardLogits(limit); err != nil {
		return loss, err
	}
	scatterRows(l.fused.dx, ln.dx, tMax, B, b0, b1)
	for i := 1; i < len(heads); i++ {
		scatterRows(l.dHeads[i], ln.dheads[i], tMax, B, b0, b1)
	}
	for t := range Tn {
		copy(in.Values[t*B+b0:t*B+b1], obj.in.Values[t*n:(t+1)*n])
		if t < tMax {
			copy(in.Terms[t*B+b0:t*B+b1], obj.in.Terms[t*n:(t+1)*n])
		}
	}
	return loss, nil
}

// backwardLogits passes the block's logit gradient (dense in dheads[0], row factors over the
// exponentials there, or sparse rows in ln.rows) through the online lane, densely when the sparse
// rows are denser than limit.
func (ln *fusedLane) backwardLogits(limit float64) error {
	dy := ln.dheads[0]
	if ln.heads.ScaledGrad != nil && ln.scaled.Rows() > 0 {
		return ln.online.BackwardRowScaled(dy, &ln.scaled, ln.dx, false)
	}
	if dy.Rows > 0 || ln.heads.SparseGrad == nil {
		return ln.online.Backward(dy, ln.dx, false)
	}
	r := &ln.rows
	if float64(r.NNZ()) > limit*float64(r.Rows*r.Cols) {
		ln.dense.Reshape(r.Rows, r.Cols)
		if err := r.ToDense(ln.dense); err != nil {
			return err
		}
		return ln.online.Backward(ln.dense, ln.dx, false)
	}
	return ln.online.BackwardSparse(r, ln.dx, false)
}

// gatherRows writes the rows of sequences [b0, b1) of src ((T+1)*B rows, time-major) into dst,
// time-major over those sequences.
func gatherRows(dst, src *tensor.Matrix, T, B, b0, b1 int) {
	n, c := b1-b0, src.Cols
	dst.Reshape((T+1)*n, c)
	for t := 0; t <= T; t++ {
		copy(dst.Data[t*n*c:(t+1)*n*c], src.Data[(t*B+b0)*c:(t*B+b1)*c])
	}
}

// scatterRows is gatherRows' inverse: the rows of src, sequences [b0, b1) time-major, into dst.
func scatterRows(dst, src *tensor.Matrix, T, B, b0, b1 int) {
	n, c := b1-b0, src.Cols
	for t := 0; t <= T; t++ {
		copy(dst.Data[(t*B+b0)*c:(t*B+b1)*c], src.Data[t*n*c:(t+1)*n*c])
	}
}
