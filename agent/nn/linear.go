package nn

import (
	"fmt"
	"math/rand/v2"

	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Linear is y = x·W + b with W of shape In x Out (b optional).
type Linear struct {
	In, Out int
	W       *Param
	B       *Param // nil without bias
	eng     *tensor.Engine
	// Workers is the number of goroutines of BackwardSparse (0: tensor.Workers(0)); the result
	// does not depend on it.
	Workers int
	// Range, when not nil, receives the range of each row of Forward's output when the product
	// computes it (see tensor.RowRange; Valid false otherwise).
	Range *tensor.RowRange

	x *tensor.Matrix // cached input of the last Forward
	y *tensor.Matrix

	// The bias folded into the products of large layers (see augmentMinCells): xa = [x 1]
	// (valid when aug is set, for the x of the last Forward), wa = [W; b], ga = [x 1]ᵀ·dy.
	aug        bool
	xa, wa, ga *tensor.Matrix

	// BackwardRowScaled's scaled inputs D·[x 1], their product with e, and e·Wᵀ.
	xs, gs, ew *tensor.Matrix

	sparse sparseJob // BackwardSparse's parallel pass
	// BackwardSparse's transposed copies of W and dW (Out x In), kept to allocate nothing.
	wt, gt []float32
	// foldAlways folds the bias into the product whatever the size (a Lane); a lane packs
	// [W; b] once (packed, fresh) until Refresh.
	foldAlways bool
	packed     tensor.WidePacked
	fresh      bool
	// A lane keeps its gradient where its passes leave it, from block to block, until
	// AddLaneGrads: [dW; db] of the dense and row-scaled passes in ga (gaLive), dWᵀ of the sparse
	// pass in gt (gtLive), with Wᵀ in wt while its values are unchanged (wtFresh).
	gaLive, gtLive, wtFresh bool
}

// laneAccumulates reports whether l is a lane that keeps its gradient in ga and gt.
func (l *Linear) laneAccumulates() bool { return l.foldAlways && l.B != nil }

// augmentMinCells is the output size (rows x Out) from which Forward and Backward fold the bias
// into the matrix products, as a row of ones appended to x: y = [x 1]·[W; b], and [dW; db] =
// [x 1]ᵀ·dy. The separate passes that add b to every row of y and sum the columns of dy cost
// as much as a tenth of the product at 2525 x 64 x 15,625; folded, they cost one more row of
// the product's inner dimension. Smaller layers keep the separate passes.
const augmentMinCells = 1 << 20

// NewLinear returns a Linear with Glorot-uniform weights and a zero bias.
func NewLinear(eng *tensor.Engine, name string, in, out int, bias bool, rng *rand.Rand) (*Linear, error) {
	if eng == nil {
		return nil, fmt.Errorf("nn: linear %q: nil engine", name)
	}
	if in <= 0 || out <= 0 {
		return nil, fmt.Errorf("nn: linear %q: sizes must be positive, got %dx%d", name, in, out)
	}
	l := &Linear{In: in, Out: out, W: NewParam(name+".W", in, out), eng: eng, y: tensor.New(0, out)}
	GlorotUniform(l.W.Value, in, out, rng)
	if bias {
		l.B = NewParam(name+".b", 1, out)
	}
	return l, nil
}

// Params returns W (and b).
func (l *Linear) Params() []*Param {
	if l.B == nil {
		return []*Param{l.W}
	}
	return []*Param{l.W, l.B}
}

// Apply computes y = x·W + b into y without caching anything (for inference).
func (l *Linear) Apply(x, y *tensor.Matrix) error {
	if x == nil || x.Cols != l.In {
		return fmt.Errorf("nn: linear %s: input %s, want ?x%d", l.W.Name, x.Shape(), l.In)
	}
	if err := tensor.CheckShape(y, x.Rows, l.Out, "nn: linear", l.W.Name, "output"); err != nil {
		return err
	}
	if err := l.eng.MatMul(y, x, false, l.W.Value, false, 1, 0); err != nil {
		return fmt.Errorf("nn: linear %s: %w", l.W.Name, err)
	}
	if l.B != nil {
		AddRowVector(y, l.B.Value.Data)
	}
	return nil
}

// Forward computes y = x·W + b and keeps a reference to x for Backward (do
// not modify x in between). The returned
// matrix is owned by l and valid until the next Forward.
func (l *Linear) Forward(x *tensor.Matrix) (*tensor.Matrix, error) {
	if x == nil {
		return nil, fmt.Errorf("nn: linear %s: nil input", l.W.Name)
	}
	l.y.Reshape(x.Rows, l.Out)
	l.aug = false
	if l.B != nil && x.Cols == l.In && (l.foldAlways || x.Rows*l.Out >= augmentMinCells) {
		l.forwardAugmented(x)
		l.x = x
		return l.y, nil
	}
	if l.Range != nil {
		l.Range.Valid = false // the bias is added after the product
	}
	if err := l.Apply(x, l.y); err != nil {
		return nil, err
	}
	l.x = x
	return l.y, nil
}

// forwardAugmented is Forward with the bias folded into the product (see augmentMinCells).
func (l *Linear) forwardAugmented(x *tensor.Matrix) {
	in, out := l.In, l.Out
	if l.xa == nil {
		l.xa, l.wa, l.ga = tensor.New(0, in+1), tensor.New(in+1, out), tensor.New(in+1, out)
	}
	l.xa.Reshape(x.Rows, in+1)
	for r := range x.Rows {
		row := l.xa.Data[r*(in+1) : (r+1)*(in+1)]
		copy(row, x.Data[r*in:(r+1)*in])
		row[in] = 1
	}
	if l.foldAlways {
		if !l.fresh {
			copy(l.wa.Data, l.W.Value.Data[:in*out])
			copy(l.wa.Data[in*out:], l.B.Value.Data[:out])
			l.eng.PackWide(&l.packed, l.wa)
			l.fresh = true
		}
		_ = l.eng.MatMulPacked(l.y, l.xa, &l.packed) // the shapes are right by construction
		l.aug = true
		return
	}
	copy(l.wa.Data, l.W.Value.Data[:in*out])
	copy(l.wa.Data[in*out:], l.B.Value.Data[:out])
	// The shapes are right by construction.
	if l.Range != nil {
		_ = l.eng.MatMulRange(l.y, l.xa, l.wa, l.Range)
	} else {
		_ = l.eng.MatMul(l.y, l.xa, false, l.wa, false, 1, 0)
	}
	l.aug = true
}

// Backward accumulates dW += xᵀ·dy and db += Σ_rows dy. When dx is not nil
// it also computes dx = dy·Wᵀ, added to dx when accumulate is set and
// overwriting it otherwise.
func (l *Linear) Backward(dy, dx *tensor.Matrix, accumulate bool) error {
	if l.x == nil {
		return fmt.Errorf("nn: linear %s: Backward before Forward", l.W.Name)
	}
	if err := tensor.CheckShape(dy, l.x.Rows, l.Out, "nn: linear", l.W.Name, "dy"); err != nil {
		return err
	}
	if l.aug && l.xa.Rows == dy.Rows && l.laneAccumulates() {
		if err := l.eng.MatMul(l.ga, l.xa, true, dy, false, 1, l.gaBeta()); err != nil {
			return err
		}
	} else if l.aug && l.xa.Rows == dy.Rows {
		if err := l.eng.MatMul(l.ga, l.xa, true, dy, false, 1, 0); err != nil {
			return err
		}
		n := l.In * l.Out
		for i, v := range l.ga.Data[:n] {
			l.W.Grad.Data[i] += v
		}
		for i, v := range l.ga.Data[n:] {
			l.B.Grad.Data[i] += v
		}
	} else {
		if err := l.eng.MatMul(l.W.Grad, l.x, true, dy, false, 1, 1); err != nil {
			return err
		}
		if l.B != nil {
			AddColumnSums(l.B.Grad.Data, dy)
		}
	}
	if dx != nil {
		if err := tensor.CheckShape(dx, l.x.Rows, l.In, "nn: linear", l.W.Name, "dx"); err != nil {
			return err
		}
		beta := float32(0)
		if accumulate {
			beta = 1
		}
		if err := l.eng.MatMul(dx, dy, false, l.W.Value, true, 1, beta); err != nil {
			return err
		}
	}
	return nil
}

// AddRowVector adds v (m.Cols long) to every row of m (a layer's bias).
func AddRowVector(m *tensor.Matrix, v []float32) {
	kAddRows(m.Data[:m.Rows*m.Cols], v[:m.Cols], m.Rows)
}

// AddColumnSums adds the column sums of m to dst (m.Cols long), each summed in row order (a
// bias's gradient).
func AddColumnSums(dst []float32, m *tensor.Matrix) {
	kAddColSums(dst[:m.Cols], m.Data[:m.Rows*m.Cols], m.Rows)
}

// Lane returns a layer of l's shape that computes with the values w and b (l's own when nil) and
// accumulates its gradients into its own, zeroed at creation: one lane of a pass over blocks of
// rows, whose partial gradient the caller adds to l's in a fixed order (AddLaneGrads), so that the
// sum does not depend on which goroutine ran which lane. A lane always folds its bias into the
// product, as l does for a whole batch of the large layers it is made for (augmentMinCells), so
// each row of its output is summed as l sums it; it packs its values once for all its Forwards
// until Refresh.
func (l *Linear) Lane(w, b *tensor.Matrix) *Linear {
	if w == nil {
		w = l.W.Value
	}
	lane := &Linear{In: l.In, Out: l.Out, W: &Param{Name: l.W.Name, Value: w, Grad: tensor.New(l.In, l.Out)},
		eng: l.eng, Workers: 1, y: tensor.New(0, l.Out), foldAlways: true}
	if l.B != nil {
		if b == nil {
			b = l.B.Value
		}
		lane.B = &Param{Name: l.B.Name, Value: b, Grad: tensor.New(1, l.Out)}
	}
	return lane
}

// Refresh tells a lane that its values changed since its last Forward (an optimiser step): it
// packs them again at its next Forward.
func (l *Linear) Refresh() { l.fresh, l.wtFresh = false, false }

// gaBeta is the factor on ga of a lane's next product into it: 0 for its first since
// ZeroLaneGrads, then 1, so that the lane's blocks add up in ga.
func (l *Linear) gaBeta() float32 {
	if l.gaLive {
		return 1
	}
	l.gaLive = true
	if l.ga == nil {
		l.ga = tensor.New(l.In+1, l.Out)
	}
	return 0
}

// ZeroLaneGrads clears a lane's gradient, wherever its passes keep it.
func (l *Linear) ZeroLaneGrads() {
	l.W.Grad.Zero()
	if l.B != nil {
		l.B.Grad.Zero()
	}
	l.gaLive, l.gtLive = false, false
}

// AddLaneGrads adds the gradients of lanes to l's, lane by lane in order, each lane's in a fixed
// order: its dense passes', its sparse passes', then what it added to its Grad directly.
func (l *Linear) AddLaneGrads(lanes ...*Linear) {
	in, out := l.In, l.Out
	for _, lane := range lanes {
		if lane.gaLive {
			for i, v := range lane.ga.Data[:in*out] {
				l.W.Grad.Data[i] += v
			}
			for i, v := range lane.ga.Data[in*out : (in+1)*out] {
				l.B.Grad.Data[i] += v
			}
		}
		if lane.gtLive {
			addTransposed(l.W.Grad.Data[:in*out], lane.gt[:in*out], in, out)
		}
		for i, v := range lane.W.Grad.Data {
			l.W.Grad.Data[i] += v
		}
		if l.B != nil {
			for i, v := range lane.B.Grad.Data {
				l.B.Grad.Data[i] += v
			}
		}
	}
}

// addTransposed adds srcᵀ (cols x rows) to dst (rows x cols).
func addTransposed(dst, src []float32, rows, cols int) {
	const tile = 32
	for r0 := 0; r0 < rows; r0 += tile {
		for c0 := 0; c0 < cols; c0 += tile {
			for r := r0; r < min(r0+tile, rows); r++ {
				row := dst[r*cols : (r+1)*cols]
				for c := c0; c < min(c0+tile, cols); c++ {
					row[c] += src[c*rows+r]
				}
			}
		}
	}
}
