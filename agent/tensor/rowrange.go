package tensor

// RowRange is what a product can report of each row of its result while the row is still in
// cache: its largest and smallest entries, and whether every entry is a number (not NaN, not
// infinite). A pass that needs a row's maximum (a softmax's shift) can then skip reading the
// row for it. Engine.MatMulRange fills it, and sets Valid, when its kernel computes it with the
// product (the wide kernel: a 5^6 output layer); otherwise it leaves Valid false, and the caller
// scans the rows itself. The maximum and minimum of a row of numbers are its entries' bits,
// whatever the order they were compared in, up to the sign of a zero.
type RowRange struct {
	Max, Min []float32
	bad      []float32 // per row: 0 when every entry is a number, NaN otherwise
	Valid    bool
}

// Finite reports whether every entry of row i is a number (Valid must be set).
func (r *RowRange) Finite(i int) bool { return r.bad[i] == 0 }

// size gives r m rows, reusing its storage.
func (r *RowRange) size(m int) {
	if cap(r.Max) < m {
		r.Max, r.Min, r.bad = make([]float32, m), make([]float32, m), make([]float32, m)
	}
	r.Max, r.Min, r.bad = r.Max[:m], r.Min[:m], r.bad[:m]
}

// rangeProducer is a BLAS implementation that can compute c = a·b (row-major, dense, no
// transposes) together with the rows' range; it reports false, having done nothing, for a product
// it does not take.
type rangeProducer interface {
	productRange(m, n, k int, a, b, c []float32, r *RowRange) bool
}

// MatMulRange computes dst = a·b, as MatMul(dst, a, false, b, false, 1, 0) does, and the range of
// every row of dst into r when the engine's kernel for the shape computes it (r.Valid then).
func (e *Engine) MatMulRange(dst, a, b *Matrix, r *RowRange) error {
	r.Valid = false
	if p, ok := e.impl.(rangeProducer); ok && dst != nil && a != nil && b != nil &&
		a.Cols == b.Rows && dst.Rows == a.Rows && dst.Cols == b.Cols && a.Rows > 0 && b.Cols > 0 && a.Cols > 0 &&
		len(a.Data) >= a.Rows*a.Cols && len(b.Data) >= b.Rows*b.Cols && len(dst.Data) >= dst.Rows*dst.Cols &&
		p.productRange(a.Rows, b.Cols, a.Cols, a.Data, b.Data, dst.Data, r) {
		return nil
	}
	return e.MatMul(dst, a, false, b, false, 1, 0)
}
