package nn

import (
	"fmt"

	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// RowScaled is a gradient dy = diag(Scale)·E kept as its parts: a dense Rows x Cols matrix E,
// which the caller holds, and one factor per row.
//
// It is soft PCL's logit gradient w·τ·(softmax(z) − onehot(a)): E holds the row's exponentials
// exp(z − max z), which the loss's first pass wrote anyway, with the taken action's entry shifted
// so that the row's factor, w·τ over their sum, gives it its −w·τ too. Written out, that gradient
// costs a pass that reads and writes every entry of E (a tenth of a 5^6 training step);
// BackwardRowScaled scales the products' small factors instead. The zero value has 0 rows; Reset
// sizes it, and refilling it allocates nothing once it has grown to the largest batch.
type RowScaled struct {
	Scale []float32
}

// Reset sizes s to rows rows, each with factor 0.
func (s *RowScaled) Reset(rows int) {
	s.Scale = growFloats(s.Scale, rows)
	clear(s.Scale)
}

// Rows is the number of rows s describes.
func (s *RowScaled) Rows() int { return len(s.Scale) }

// Validate checks that s has one factor per row of e.
func (s *RowScaled) Validate(e *tensor.Matrix) error {
	if e == nil {
		return fmt.Errorf("nn: row-scaled gradient over a nil matrix")
	}
	if len(s.Scale) != e.Rows {
		return fmt.Errorf("nn: row-scaled gradient has %d factors for %d rows", len(s.Scale), e.Rows)
	}
	return nil
}

// ToDense writes dy = diag(Scale)·e into dst (e's shape).
func (s *RowScaled) ToDense(e, dst *tensor.Matrix) error {
	if err := s.Validate(e); err != nil {
		return err
	}
	if err := tensor.SameShape("nn: row-scaled gradient", e, dst); err != nil {
		return err
	}
	for r := range e.Rows {
		row, c := dst.Row(r), s.Scale[r]
		for j, v := range e.Row(r) {
			row[j] = c * v
		}
	}
	return nil
}

// BackwardRowScaled is Backward for the gradient dy = diag(s.Scale)·e (x.Rows x Out for the x of
// the last Forward): dW += xᵀ·dy, db += Σ_rows dy and, when dx is not nil, dx = dy·Wᵀ (added to
// dx when accumulate is set). It never forms dy: with D = diag(s.Scale),
//
//	[dW; db] += (D·[x 1])ᵀ·e       dx = D·(e·Wᵀ)
//
// The products are the dense Backward's, on e instead of dy; the scaling touches only the
// Rows x (In+1) factors. The sums are in another order than Backward's on dy written out, so the
// results differ from it by float rounding.
func (l *Linear) BackwardRowScaled(e *tensor.Matrix, s *RowScaled, dx *tensor.Matrix, accumulate bool) error {
	if l.x == nil {
		return fmt.Errorf("nn: linear %s: BackwardRowScaled before Forward", l.W.Name)
	}
	if s == nil {
		return fmt.Errorf("nn: linear %s: nil row-scaled dy", l.W.Name)
	}
	if err := tensor.CheckShape(e, l.x.Rows, l.Out, "nn: linear", l.W.Name, "row-scaled dy"); err != nil {
		return err
	}
	if err := s.Validate(e); err != nil {
		return fmt.Errorf("nn: linear %s: %w", l.W.Name, err)
	}
	if dx != nil {
		if err := tensor.CheckShape(dx, l.x.Rows, l.In, "nn: linear", l.W.Name, "dx"); err != nil {
			return err
		}
	}
	rows, in, out := e.Rows, l.In, l.Out
	if rows == 0 {
		return nil
	}
	// xs = D·[x 1] (no column of ones without a bias): one product gives dW and db.
	cols := in
	if l.B != nil {
		cols++
	}
	if l.xs == nil {
		l.xs, l.gs = tensor.New(0, cols), tensor.New(cols, out)
	}
	l.xs.Reshape(rows, cols)
	x := l.x.Data[:rows*in]
	for r := range rows {
		xr, sr, c := x[r*in:(r+1)*in], l.xs.Data[r*cols:(r+1)*cols], s.Scale[r]
		for i, v := range xr {
			sr[i] = c * v
		}
		if l.B != nil {
			sr[in] = c
		}
	}
	if l.laneAccumulates() { // a lane adds its blocks up in ga ([dW; db], the shape of gs)
		if err := l.eng.MatMul(l.ga, l.xs, true, e, false, 1, l.gaBeta()); err != nil {
			return fmt.Errorf("nn: linear %s: %w", l.W.Name, err)
		}
		return l.rowScaledDx(e, s, dx, accumulate)
	}
	if err := l.eng.MatMul(l.gs, l.xs, true, e, false, 1, 0); err != nil {
		return fmt.Errorf("nn: linear %s: %w", l.W.Name, err)
	}
	wg := l.W.Grad.Data[:in*out]
	for i, v := range l.gs.Data[:in*out] {
		wg[i] += v
	}
	if l.B != nil {
		db := l.B.Grad.Data[:out]
		for j, v := range l.gs.Data[in*out : (in+1)*out] {
			db[j] += v
		}
	}
	return l.rowScaledDx(e, s, dx, accumulate)
}

// rowScaledDx is BackwardRowScaled's dx = D·(e·Wᵀ), added to dx when accumulate is set.
func (l *Linear) rowScaledDx(e *tensor.Matrix, s *RowScaled, dx *tensor.Matrix, accumulate bool) error {
	rows, in := e.Rows, l.In
	if dx == nil {
		return nil
	}
	if l.ew == nil {
		l.ew = tensor.New(0, in)
	}
	l.ew.Reshape(rows, in)
	if err := l.eng.MatMul(l.ew, e, false, l.W.Value, true, 1, 0); err != nil {
		return fmt.Errorf("nn: linear %s: %w", l.W.Name, err)
	}
	for r := range rows {
		dr, er, c := dx.Data[r*in:(r+1)*in], l.ew.Data[r*in:(r+1)*in], s.Scale[r]
		if accumulate {
			for i, v := range er {
				dr[i] += c * v
			}
		} else {
			for i, v := range er {
				dr[i] = c * v
			}
		}
	}
	return nil
}
