package nn

import (
	"fmt"

	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// SparseRows is a Rows x Cols float32 matrix stored by rows (compressed
// sparse rows): the nonzeros of row r are Index[Offsets[r]:Offsets[r+1]]
// (column numbers) with Values[Offsets[r]:Offsets[r+1]]. Offsets has Rows+1
// entries, starts at 0 and ends at len(Index) = len(Values). Columns within
// a row need not be sorted; a column given twice in a row adds up, as in a
// coordinate list. Every other entry is zero.
//
// It is the gradient of a loss on the logits when only a few logits per
// row have a nonzero derivative (sparse PCL: the support of the policy and
// the taken action). Build it row by row with Reset, Add and EndRow (or
// AppendRow); the slices are reused, so refilling it allocates nothing once
// they have grown to the largest batch. The zero value is an empty matrix
// with 0 columns.
type SparseRows struct {
	Rows, Cols int
	Offsets    []int
	Index      []int32
	Values     []float32
}

// Reset empties s to 0 rows of cols columns, keeping its storage.
func (s *SparseRows) Reset(cols int) {
	s.Rows, s.Cols = 0, cols
	s.Offsets = append(s.Offsets[:0], 0)
	s.Index = s.Index[:0]
	s.Values = s.Values[:0]
}

// Add appends the entry (row s.Rows, col) = v to the row being built; EndRow
// closes the row. Add does not check col: Validate (and BackwardSparse)
// report an out-of-range column.
func (s *SparseRows) Add(col int, v float32) {
	if len(s.Offsets) == 0 {
		s.Offsets = append(s.Offsets, 0)
	}
	c := int32(col)
	if int(c) != col {
		c = -1 // beyond int32: left for Validate to report
	}
	s.Index = append(s.Index, c)
	s.Values = append(s.Values, v)
}

// EndRow closes the row being built (which may be empty) and starts the
// next one.
func (s *SparseRows) EndRow() {
	if len(s.Offsets) == 0 {
		s.Offsets = append(s.Offsets, 0)
	}
	s.Offsets = append(s.Offsets, len(s.Index))
	s.Rows++
}

// AppendRow appends a whole row with the given columns and values (it is
// Add for each pair, then EndRow).
func (s *SparseRows) AppendRow(index []int32, values []float32) error {
	if len(index) != len(values) {
		return fmt.Errorf("nn: sparse rows: row %d has %d columns and %d values", s.Rows, len(index), len(values))
	}
	if len(s.Offsets) == 0 {
		s.Offsets = append(s.Offsets, 0)
	}
	s.Index = append(s.Index, index...)
	s.Values = append(s.Values, values...)
	s.EndRow()
	return nil
}

// AppendDenseRow appends the nonzero entries of a dense row of s.Cols values.
func (s *SparseRows) AppendDenseRow(row []float32) error {
	if len(row) != s.Cols {
		return fmt.Errorf("nn: sparse rows: dense row of %d values, want %d", len(row), s.Cols)
	}
	for j, v := range row {
		if v != 0 {
			s.Add(j, v)
		}
	}
	s.EndRow()
	return nil
}

// NNZ returns the number of stored entries.
func (s *SparseRows) NNZ() int { return len(s.Index) }

// Row returns the columns and values of row r, sharing memory with s.
func (s *SparseRows) Row(r int) ([]int32, []float32) {
	a, b := s.Offsets[r], s.Offsets[r+1]
	return s.Index[a:b], s.Values[a:b]
}

// Validate reports the first inconsistency: negative sizes, Offsets of the
// wrong length, not starting at 0, decreasing, or not ending at
// len(Index) (an Add without its EndRow), Index and Values of different
// lengths, or a column outside [0, Cols).
func (s *SparseRows) Validate() error {
	if s == nil {
		return fmt.Errorf("nn: sparse rows: nil")
	}
	if s.Rows < 0 || s.Cols < 0 {
		return fmt.Errorf("nn: sparse rows: negative shape %dx%d", s.Rows, s.Cols)
	}
	if len(s.Index) != len(s.Values) {
		return fmt.Errorf("nn: sparse rows: %d columns but %d values", len(s.Index), len(s.Values))
	}
	if len(s.Offsets) == 0 && s.Rows == 0 && len(s.Index) == 0 {
		return nil // the zero value
	}
	if len(s.Offsets) != s.Rows+1 {
		return fmt.Errorf("nn: sparse rows: %d offsets for %d rows, want %d", len(s.Offsets), s.Rows, s.Rows+1)
	}
	if s.Offsets[0] != 0 {
		return fmt.Errorf("nn: sparse rows: offsets start at %d, want 0", s.Offsets[0])
	}
	for r := 0; r < s.Rows; r++ {
		if s.Offsets[r+1] < s.Offsets[r] {
			return fmt.Errorf("nn: sparse rows: offsets decrease at row %d (%d to %d)", r, s.Offsets[r], s.Offsets[r+1])
		}
	}
	if end := s.Offsets[s.Rows]; end != len(s.Index) {
		if end < len(s.Index) {
			return fmt.Errorf("nn: sparse rows: %d entries after the last row (Add without EndRow)", len(s.Index)-end)
		}
		return fmt.Errorf("nn: sparse rows: offsets end at %d, but there are %d entries", end, len(s.Index))
	}
	for r := 0; r < s.Rows; r++ {
		for e := s.Offsets[r]; e < s.Offsets[r+1]; e++ {
			if c := s.Index[e]; c < 0 || int(c) >= s.Cols {
				return fmt.Errorf("nn: sparse rows: row %d has column %d, outside [0, %d)", r, c, s.Cols)
			}
		}
	}
	return nil
}

// ToDense writes s into dst (Rows x Cols), duplicates added.
func (s *SparseRows) ToDense(dst *tensor.Matrix) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if err := tensor.CheckShape(dst, s.Rows, s.Cols, "nn: sparse rows to dense"); err != nil {
		return err
	}
	dst.Zero()
	for r := 0; r < s.Rows; r++ {
		row := dst.Row(r)
		for e := s.Offsets[r]; e < s.Offsets[r+1]; e++ {
			row[s.Index[e]] += s.Values[e]
		}
	}
	return nil
}

// BackwardSparse is Backward for a gradient dy that is nonzero only on a few
// columns per row: dW += xᵀ·dy, db += Σ_rows dy and, when dx is not nil,
// dx = dy·Wᵀ (added to dx when accumulate is set, overwriting it
// otherwise; a row of dy without entries gives a zero row of dx). dy must
// be x.Rows x Out for the x of the last Forward. It costs O(nnz·In) instead
// of the O(Rows·Out·In) of the dense products, and leaves every entry of dW
// outside the columns of dy untouched.
//
// The products run In-major: for each block of four input units k, rows k
// of W and of dW (Out floats each, 500 KB for the block at Out = 15,625,
// in cache) are visited at the columns of dy, and dx[:, k] is finished in
// the same sweep.
func (l *Linear) BackwardSparse(dy *SparseRows, dx *tensor.Matrix, accumulate bool) error {
	if l.x == nil {
		return fmt.Errorf("nn: linear %s: BackwardSparse before Forward", l.W.Name)
	}
	if dy == nil {
		return fmt.Errorf("nn: linear %s: nil sparse dy", l.W.Name)
	}
	if err := dy.Validate(); err != nil {
		return fmt.Errorf("nn: linear %s: dy: %w", l.W.Name, err)
	}
	if dy.Rows != l.x.Rows || dy.Cols != l.Out {
		return fmt.Errorf("nn: linear %s: sparse dy is %dx%d, want %dx%d", l.W.Name, dy.Rows, dy.Cols, l.x.Rows, l.Out)
	}
	if dx != nil && (dx.Rows != l.x.Rows || dx.Cols != l.In) {
		return fmt.Errorf("nn: linear %s dx: shape %s, want %dx%d", l.W.Name, dx.Shape(), l.x.Rows, l.In)
	}
	rows, in, out := dy.Rows, l.In, l.Out
	if rows == 0 {
		return nil
	}
	x := l.x.Data[:rows*in]
	var dxd []float32
	if dx != nil {
		dxd = dx.Data[:rows*in]
	}
	wv, wg := l.W.Value.Data[:in*out], l.W.Grad.Data[:in*out]
	// The blocks of four input units write disjoint rows of dW and columns of dx, each the same
	// way whoever runs it: they run in parallel.
	// Small products stay on the caller (a goroutine costs more than they do).
	if n := in/4 + in%4; dy.NNZ()*in < sparseParallelMin {
		sparseBlocks(dy, x, in, out, wv, wg, dxd, accumulate, 0, n)
	} else {
		l.sparse = sparseJob{dy: dy, x: x, in: in, out: out, wv: wv, wg: wg, dxd: dxd, accumulate: accumulate}
		tensor.ParallelRows(n, 1, tensor.Workers(l.Workers), &l.sparse)
		l.sparse = sparseJob{}
	}
	if l.B != nil {
		db := l.B.Grad.Data[:out]
		for e, j := range dy.Index {
			db[j] += dy.Values[e]
		}
	}
	return nil
}

// sparseJob is BackwardSparse's blocks as a tensor.RowJob, kept in the layer so that passing it
// allocates nothing.
type sparseJob struct {
	dy             *SparseRows
	x, wv, wg, dxd []float32
	in, out        int
	accumulate     bool
}

func (j *sparseJob) Rows(_, lo, hi int) {
	sparseBlocks(j.dy, j.x, j.in, j.out, j.wv, j.wg, j.dxd, j.accumulate, lo, hi)
}

// sparseBlocks runs the blocks [lo, hi) of BackwardSparse: block q < in/4 is input units
// 4q..4q+3, the blocks after it the remaining units one by one.
func sparseBlocks(dy *SparseRows, x []float32, in, out int, wv, wg, dxd []float32, accumulate bool, lo, hi int) {
	quads := in / 4
	for q := lo; q < hi; q++ {
		if q < quads {
			k := 4 * q
			sparseBackward4(dy, x, in, k, wv[k*out:(k+4)*out], wg[k*out:(k+4)*out], dxd, accumulate)
			continue
		}
		k := 4*quads + q - quads
		sparseBackward1(dy, x, in, k, wv[k*out:(k+1)*out], wg[k*out:(k+1)*out], dxd, accumulate)
	}
}

// sparseParallelMin is the work (non-zeros x input units) from which BackwardSparse splits the
// input units over goroutines.
const sparseParallelMin = 1 << 16

// sparseBackward4 does rows k..k+3 of dW (w and g hold those rows of W and
// dW) and, when dxd is not nil, columns k..k+3 of dx: the four rows share
// each load of a column number, a value and the cache line of x.
func sparseBackward4(dy *SparseRows, x []float32, in, k int, w, g []float32, dxd []float32, accumulate bool) {
	out := len(w) / 4
	w0, w1, w2, w3 := w[:out], w[out:2*out], w[2*out:3*out], w[3*out:4*out]
	g0, g1, g2, g3 := g[:out], g[out:2*out], g[2*out:3*out], g[3*out:4*out]
	for r := 0; r < dy.Rows; r++ {
		a, b := dy.Offsets[r], dy.Offsets[r+1]
		if a == b && dxd == nil {
			continue
		}
		idx, val := dy.Index[a:b], dy.Values[a:b]
		val = val[:len(idx)]
		xr := x[r*in+k : r*in+k+4]
		x0, x1, x2, x3 := xr[0], xr[1], xr[2], xr[3]
		if dxd == nil {
			for e, j := range idx {
				v := val[e]
				g0[j] += x0 * v
				g1[j] += x1 * v
				g2[j] += x2 * v
				g3[j] += x3 * v
			}
			continue
		}
		var s0, s1, s2, s3 float32
		for e, j := range idx {
			v := val[e]
			g0[j] += x0 * v
			g1[j] += x1 * v
			g2[j] += x2 * v
			g3[j] += x3 * v
			s0 += v * w0[j]
			s1 += v * w1[j]
			s2 += v * w2[j]
			s3 += v * w3[j]
		}
		d := dxd[r*in+k : r*in+k+4]
		if accumulate {
			d[0] += s0
			d[1] += s1
			d[2] += s2
			d[3] += s3
		} else {
			d[0], d[1], d[2], d[3] = s0, s1, s2, s3
		}
	}
}

// sparseBackward1 is sparseBackward4 for the single row k.
func sparseBackward1(dy *SparseRows, x []float32, in, k int, w, g []float32, dxd []float32, accumulate bool) {
	for r := 0; r < dy.Rows; r++ {
		a, b := dy.Offsets[r], dy.Offsets[r+1]
		idx, val := dy.Index[a:b], dy.Values[a:b]
		val = val[:len(idx)]
		xv := x[r*in+k]
		var s float32
		for e, j := range idx {
			v := val[e]
			g[j] += xv * v
			s += v * w[j]
		}
		if dxd == nil {
			continue
		}
		if accumulate {
			dxd[r*in+k] += s
		} else {
			dxd[r*in+k] = s
		}
	}
}
