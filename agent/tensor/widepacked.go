package tensor

import "fmt"

// WidePacked is the right operand of many wide products packed once (the fused output layer's
// blocks: every block of rows against the same 65 × 15,625 weights), so that each product skips
// the packing (1-2 ms at 5^6) that MatMul repeats.
type WidePacked struct {
	b  *Matrix
	bp []float32
	ok bool // b is packed for the wide kernel
}

// wideEngine is a backend that runs the wide kernel (OpenBLAS on the CPUs wide.go names).
type wideEngine interface{ wideKernel() bool }

// PackWide packs b for MatMulPacked. When the engine would not give products against b to the
// wide kernel, p only keeps b, and MatMulPacked runs MatMul.
func (e *Engine) PackWide(p *WidePacked, b *Matrix) {
	p.b, p.ok = b, false
	w, isWide := e.impl.(wideEngine)
	if !isWide || !w.wideKernel() || !wide(false, false, fewRowsMax+1, b.Cols, b.Rows, 1, 0) {
		return
	}
	size := widePanels(b.Cols, b.Rows)
	if cap(p.bp) < size {
		p.bp = make([]float32, size)
	}
	p.bp = p.bp[:size]
	widePack(b.Cols, b.Rows, b.Data, p.bp)
	p.ok = true
}

// MatMulPacked computes dst = a·b for the b of the last PackWide, with MatMul's bits: the wide
// kernel's on the panels packed then, or MatMul itself for the products it does not take (b
// must not have changed since PackWide).
func (e *Engine) MatMulPacked(dst, a *Matrix, p *WidePacked) error {
	if p.b == nil {
		return fmt.Errorf("tensor: packed product before PackWide")
	}
	m, n, k := a.Rows, p.b.Cols, p.b.Rows
	if !p.ok || !wide(false, false, m, n, k, 1, 0) {
		return e.MatMul(dst, a, false, p.b, false, 1, 0)
	}
	if a.Cols != k || dst.Rows != m || dst.Cols != n {
		return fmt.Errorf("tensor: packed product %s · %s into %s", a.Shape(), p.b.Shape(), dst.Shape())
	}
	j := &wideJob{n: n, k: k, a: a.Data[:m*k], b: p.b.Data[:k*n], bp: p.bp, c: dst.Data[:m*n]}
	ParallelRows(m, wideRowBlock, Workers(0), j)
	return nil
}
