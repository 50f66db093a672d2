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
// The products run on transposed copies of W and dW (Out x In), so that the
// In weights of one column of dy are contiguous and each entry of dy is one
// short vector operation on them: for each block of input units, the rows of
// dy in order, each entry's slice of dWᵀ and of Wᵀ. Each entry of dW and dx
// is summed in the order of the rows and entries of dy, whatever the blocks.
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
	wg := l.W.Grad.Data[:in*out]
	lane := l.laneAccumulates() // a lane keeps dWᵀ in gt and Wᵀ in wt from block to block
	switch {
	case !lane:
		l.gt = growFloats(l.gt, in*out)
		transpose(l.gt, wg, in, out)
	case !l.gtLive:
		l.gt = growFloats(l.gt, in*out)
		clear(l.gt)
		l.gtLive = true
	}
	if dxd != nil && !(lane && l.wtFresh) {
		l.wt = growFloats(l.wt, in*out)
		transpose(l.wt, l.W.Value.Data[:in*out], in, out)
		l.wtFresh = lane
	}
	// The blocks of input units write disjoint slices of dWᵀ and columns of dx, each the same
	// way whoever runs it: they run in parallel. Small products stay on the caller (a goroutine
	// costs more than they do).
	l.sparse = sparseJob{dy: dy, x: x, in: in, wt: l.wt, gt: l.gt, dxd: dxd, accumulate: accumulate}
	if n := (in + sparseBlock - 1) / sparseBlock; n == 1 || dy.NNZ()*in < sparseParallelMin {
		l.sparse.Rows(0, 0, n)
	} else {
		tensor.ParallelRows(n, 1, tensor.Workers(l.Workers), &l.sparse)
	}
	l.sparse = sparseJob{}
	if !lane {
		transpose(wg, l.gt, out, in)
	}
	if l.B != nil {
		db := l.B.Grad.Data[:out]
		for e, j := range dy.Index {
			db[j] += dy.Values[e]
		}
	}
	return nil
}

// sparseBlock is the number of input units of one block of BackwardSparse: one AVX-512 vector
// of floats, so that each entry of dy touches one cache line of dWᵀ in a block.
const sparseBlock = 16

// sparseParallelMin is the work (non-zeros x input units) from which BackwardSparse splits the
// input units over goroutines.
const sparseParallelMin = 1 << 16

// sparseJob is BackwardSparse's blocks of input units as a tensor.RowJob, kept in the layer so
// that passing it allocates nothing.
type sparseJob struct {
	dy             *SparseRows
	x, wt, gt, dxd []float32
	in             int
	accumulate     bool
}

func (j *sparseJob) Rows(_, lo, hi int) {
	for b := lo; b < hi; b++ {
		k0 := b * sparseBlock
		kSparseBackwardT(j.dy, j.x, j.in, k0, min(k0+sparseBlock, j.in), j.wt, j.gt, j.dxd, j.accumulate)
	}
}

// growFloats returns s with length n, reusing its storage when it is large enough.
func growFloats(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}
