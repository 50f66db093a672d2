package lstm

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// layer is the LSTM layer: TF's BasicLSTMCell/LSTMCell without peepholes, run over a
// time-major batch of variable-length sequences:
//
//	[i j f o] = x·Wx + h_prev·Wh + b
//	c = c_prev·σ(f + ForgetBias) + σ(i)·tanh(j)
//	h = σ(o)·tanh(c)
//
// The kernel [Wx; Wh] is Glorot-uniform over its full (In+Hidden) x 4Hidden
// shape, b starts at zero and ForgetBias is the constant 1 TF adds.
//
// Step t of sequence b (row t*B+b) is active when t < lengths[b]; inactive
// rows output h = c = 0, receive no gradient and pass none on. Since
// inactive steps only ever follow a sequence's end, nothing downstream of
// them is active. (Net also runs it internally on packed batches that
// hold active rows only.)
type layer struct {
	In, Hidden int
	ForgetBias float32
	Wx, Wh, B  *nn.Param
	eng        *tensor.Engine
	pool       *cellPool // runs the elementwise gate arithmetic; nil: caller only
	pureGo     bool      // use the Go cell functions even with the C kernels built in

	// Training caches (Forward), reused across calls. The layout places
	// step t: its stepRows[t] rows start at row stepOff[t] of the step-major
	// buffers (gates, tanhC, dGates, dh, dc) and at row b+stepOff[t] of hs
	// and cs, whose first b rows are the zero initial state. Time-major
	// (Forward): B rows per step, masked by lengths. Packed (beginPacked):
	// only the stepRows[t] active rows, lengths nil.
	t, b     int
	lengths  []int
	stepRows []int
	stepOff  []int // T+1 entries; stepOff[T] is the number of rows
	x        *tensor.Matrix
	gates    *tensor.Matrix // rows x 4H gate activations σ(i) tanh(j) σ(f+1) σ(o)
	hs, cs   *tensor.Matrix // (B+rows) x H; the first B rows are the initial (zero) state
	tanhC    *tensor.Matrix // rows x H

	// Backward buffers.
	dGates         *tensor.Matrix
	dhNext, dcNext *tensor.Matrix
	dx             *tensor.Matrix
	dProjParts     []float32      // per-worker partial input-table gradients
	hPrev          *tensor.Matrix // packed: h_{t-1} aligned with the rows of dGates
}

// newLayer returns an LSTM layer with TF's default initialisation.
func newLayer(eng *tensor.Engine, name string, in, hidden int, rng *rand.Rand) (*layer, error) {
	if eng == nil {
		return nil, fmt.Errorf("lstm: layer %q: nil engine", name)
	}
	if in <= 0 || hidden <= 0 {
		return nil, fmt.Errorf("lstm: layer %q: sizes must be positive, got in=%d hidden=%d", name, in, hidden)
	}
	l := &layer{
		In: in, Hidden: hidden, ForgetBias: 1, eng: eng, pool: newCellPool(),
		Wx: nn.NewParam(name+".Wx", in, 4*hidden),
		Wh: nn.NewParam(name+".Wh", hidden, 4*hidden),
		B:  nn.NewParam(name+".b", 1, 4*hidden),
	}
	limit := math.Sqrt(6 / float64(in+hidden+4*hidden))
	for _, w := range []*tensor.Matrix{l.Wx.Value, l.Wh.Value} {
		for i := range w.Data {
			w.Data[i] = float32((2*rng.Float64() - 1) * limit)
		}
	}
	l.gates, l.hs, l.cs, l.tanhC = tensor.New(0, 4*hidden), tensor.New(0, hidden), tensor.New(0, hidden), tensor.New(0, hidden)
	l.dGates, l.dhNext, l.dcNext, l.dx = tensor.New(0, 4*hidden), tensor.New(0, hidden), tensor.New(0, hidden), tensor.New(0, in)
	l.hPrev = tensor.New(0, hidden)
	return l, nil
}

// Params returns Wx, Wh, b.
func (l *layer) Params() []*nn.Param { return []*nn.Param{l.Wx, l.Wh, l.B} }

// checkLengths validates a batch description.
func checkLengths(T, B int, lengths []int) error {
	if T <= 0 || B <= 0 {
		return fmt.Errorf("lstm: sequence batch T=%d B=%d: both must be positive", T, B)
	}
	if len(lengths) != B {
		return fmt.Errorf("lstm: %d lengths for a batch of B=%d sequences", len(lengths), B)
	}
	for b, n := range lengths {
		if n < 1 || n > T {
			return fmt.Errorf("lstm: lengths[%d] = %d outside 1..T=%d", b, n, T)
		}
	}
	return nil
}

// cell runs one LSTM cell on a row: g holds the pre-activations [i j f o]
// and is overwritten with the activations; cPrev may alias c. tc (tanh c)
// is stored when not nil.
func cell(g, cPrev, c, h, tc []float32, forgetBias float32) {
	H := len(c)
	gi, gj, gf, gout := g[:H], g[H:2*H], g[2*H:3*H], g[3*H:4*H]
	_, _, _, _ = cPrev[H-1], h[H-1], gj[H-1], gf[H-1]
	for k := 0; k < H; k++ {
		i := sigmoid32(gi[k])
		j := tanh32(gj[k])
		f := sigmoid32(gf[k] + forgetBias)
		o := sigmoid32(gout[k])
		ck := cPrev[k]*f + i*j
		t := tanh32(ck)
		gi[k], gj[k], gf[k], gout[k] = i, j, f, o
		c[k] = ck
		h[k] = o * t
		if tc != nil {
			tc[k] = t
		}
	}
}

// Forward runs the LSTM over x (T*B x In, time-major) from a zero state and
// returns h and c (T*B x Hidden each; owned by l, valid until the next
// Forward). All input projections are one gemm; each step after the first
// adds one recurrent gemm.
func (l *layer) Forward(x *tensor.Matrix, T, B int, lengths []int) (h, c *tensor.Matrix, err error) {
	if err := checkLengths(T, B, lengths); err != nil {
		return nil, nil, fmt.Errorf("lstm: lstm %s: %w", l.Wx.Name, err)
	}
	if err := tensor.CheckShape(x, T*B, l.In, "lstm: lstm", l.Wx.Name, "input"); err != nil {
		return nil, nil, err
	}
	gates := l.beginForward(T, B, lengths)
	l.x = x
	if err := l.eng.MatMul(gates, x, false, l.Wx.Value, false, 1, 0); err != nil {
		return nil, nil, err
	}
	nn.AddRowVector(gates, l.B.Value.Data)
	return l.recur(nil)
}

// beginForward sizes the caches for a validated time-major T x B batch and
// returns the T*B x 4H buffer for the input pre-activations x·Wx + b, which
// the caller fills before recur(nil). It forgets the cached input: a
// forward started here without Forward can only be back-propagated by
// backwardGates.
func (l *layer) beginForward(T, B int, lengths []int) *tensor.Matrix {
	l.lengths = append(l.lengths[:0], lengths...)
	l.stepRows, l.stepOff = l.stepRows[:0], l.stepOff[:0]
	for t := 0; t < T; t++ {
		l.stepRows = append(l.stepRows, B)
		l.stepOff = append(l.stepOff, t*B)
	}
	l.stepOff = append(l.stepOff, T*B)
	l.sizeCaches(T, B)
	return l.gates
}

// beginPacked sizes the caches for a packed batch of B sequences: step t
// has rows[t] active sequences (non-increasing, rows[0] = B), the longest
// first, so the state a step continues is a prefix of the previous step's.
// Only recur(in) can run it; it returns h and c in packed row order.
func (l *layer) beginPacked(B int, rows []int) {
	l.lengths = l.lengths[:0]
	l.stepRows = append(l.stepRows[:0], rows...)
	l.stepOff = append(l.stepOff[:0], 0)
	for _, n := range rows {
		l.stepOff = append(l.stepOff, l.stepOff[len(l.stepOff)-1]+n)
	}
	l.sizeCaches(len(rows), B)
}

func (l *layer) sizeCaches(T, B int) {
	H, N := l.Hidden, l.stepOff[T]
	l.t, l.b, l.x = T, B, nil
	l.gates.Reshape(N, 4*H)
	l.hs.Reshape(B+N, H)
	l.cs.Reshape(B+N, H)
	l.tanhC.Reshape(N, H)
	clear(l.hs.Data[:B*H])
	clear(l.cs.Data[:B*H])
}

// packed reports whether the last forward ran a packed batch.
func (l *layer) packed() bool { return len(l.lengths) == 0 }

// prevRow is the first hs/cs row of the state step t continues.
func (l *layer) prevRow(t int) int {
	if t == 0 {
		return 0
	}
	return l.b + l.stepOff[t-1]
}

// recur runs the recurrence and returns h and c (one row per row of the
// layout). With in nil, l.gates holds the input pre-activations x·Wx + b;
// otherwise its contents are ignored and each cell adds its input row from
// in (tokens in layout row order) while it is hot in cache, saving a pass
// over the pre-activations.
func (l *layer) recur(in *inputRows) (h, c *tensor.Matrix, err error) {
	T, B, H := l.t, l.b, l.Hidden
	var lengths []int
	if !l.packed() {
		lengths = l.lengths
	}
	for t := 0; t < T; t++ {
		n, off, prev := l.stepRows[t], l.stepOff[t], l.prevRow(t)
		gt := l.gates.RowSlice(off, off+n)
		switch {
		case t > 0:
			beta := float32(1)
			if in != nil {
				beta = 0
			}
			if err := l.eng.MatMul(gt, l.hs.RowSlice(prev, prev+n), false, l.Wh.Value, false, 1, beta); err != nil {
				return nil, nil, err
			}
		case in != nil:
			gt.Zero() // h_{-1} = 0: no recurrent term
		}
		j := cellJob{
			hidden: H, forget: l.ForgetBias, t: t, lengths: lengths, pureGo: l.pureGo,
			gates: gt.Data,
			cPrev: l.cs.Data[prev*H : (prev+n)*H], c: l.cs.Data[(B+off)*H : (B+off+n)*H],
			h: l.hs.Data[(B+off)*H : (B+off+n)*H], tc: l.tanhC.Data[off*H : (off+n)*H],
		}
		if in != nil {
			F := len(in.offs)
			j.in, j.tokens = in, in.tokens[off*F:(off+n)*F]
		}
		l.pool.run(j, n)
	}
	N := l.stepOff[T]
	return l.hs.RowSlice(B, B+N), l.cs.RowSlice(B, B+N), nil
}

// Backward takes the gradients of the loss w.r.t. the h and c returned by
// Forward (dc may be nil), accumulates the parameter gradients and returns
// dx (T*B x In, owned by l). Rows of inactive steps are ignored.
func (l *layer) Backward(dh, dc *tensor.Matrix) (*tensor.Matrix, error) {
	if l.x == nil {
		return nil, fmt.Errorf("lstm: lstm %s: Backward before Forward", l.Wx.Name)
	}
	dGates, err := l.backwardGates(dh, dc, nil, nil)
	if err != nil {
		return nil, err
	}
	T, B := l.t, l.b
	if err := l.eng.MatMul(l.Wx.Grad, l.x, true, dGates, false, 1, 1); err != nil {
		return nil, err
	}
	nn.AddColumnSums(l.B.Grad.Data, dGates)
	l.dx.Reshape(T*B, l.In)
	if err := l.eng.MatMul(l.dx, dGates, false, l.Wx.Value, true, 1, 0); err != nil {
		return nil, err
	}
	return l.dx, nil
}

// backwardGates back-propagates through the recurrence of the last forward
// pass, accumulates the gradient of Wh and returns dG = dL/d(x·Wx + b)
// (owned by l; one row per row of the layout, zero on inactive rows). dh
// and dc (may be nil) are laid out like the h and c of recur. The caller
// owns the gradients of Wx and b. When in is set (the input rows of recur),
// each cell also scatters its dG row into dProj, the gradient of in.proj
// (bias row last): the adjoint of the gather, done while the row is hot in
// cache, into one partial sum per worker.
func (l *layer) backwardGates(dh, dc *tensor.Matrix, in *inputRows, dProj *tensor.Matrix) (*tensor.Matrix, error) {
	T, B, H := l.t, l.b, l.Hidden
	if T == 0 {
		return nil, fmt.Errorf("lstm: lstm %s: Backward before Forward", l.Wx.Name)
	}
	N := l.stepOff[T]
	if err := tensor.CheckShape(dh, N, H, "lstm: lstm", l.Wx.Name, "dh"); err != nil {
		return nil, err
	}
	if dc != nil {
		if err := tensor.CheckShape(dc, N, H, "lstm: lstm", l.Wx.Name, "dc"); err != nil {
			return nil, err
		}
	}
	var lengths []int
	if !l.packed() {
		lengths = l.lengths
	}
	l.dGates.Reshape(N, 4*H)
	// Rows of dhNext/dcNext beyond the sequences active at t+1 stay zero:
	// steps are visited backwards and the active count never shrinks.
	l.dhNext.Reshape(B, H)
	l.dcNext.Reshape(B, H)
	l.dhNext.Zero()
	l.dcNext.Zero()
	parts, err := l.projGradParts(in, dProj)
	if err != nil {
		return nil, err
	}
	for t := T - 1; t >= 0; t-- {
		n, off, prev := l.stepRows[t], l.stepOff[t], l.prevRow(t)
		dGt := l.dGates.RowSlice(off, off+n)
		j := cellJob{
			backward: true, hidden: H, t: t, lengths: lengths, pureGo: l.pureGo,
			gates: l.gates.Data[off*4*H : (off+n)*4*H], cPrev: l.cs.Data[prev*H : (prev+n)*H],
			tc: l.tanhC.Data[off*H : (off+n)*H], dhExt: dh.Data[off*H : (off+n)*H],
			dhNext: l.dhNext.Data[:n*H], dcNext: l.dcNext.Data[:n*H], dGates: dGt.Data,
		}
		if dc != nil {
			j.dcExt = dc.Data[off*H : (off+n)*H]
		}
		if in != nil {
			F := len(in.offs)
			j.in, j.tokens, j.dProjParts = in, in.tokens[off*F:(off+n)*F], parts
		}
		l.pool.run(j, n)
		if t > 0 {
			if err := l.eng.MatMul(l.dhNext.RowSlice(0, n), dGt, false, l.Wh.Value, true, 1, 0); err != nil {
				return nil, err
			}
		}
	}
	for _, part := range parts {
		for i, v := range part {
			dProj.Data[i] += v
		}
	}
	if err := l.recurrentGrad(); err != nil {
		return nil, err
	}
	return l.dGates, nil
}

// projGradParts are the workers' cleared partial gradients of the projected input table (nil
// on the direct input path, in nil), each the size of dProj.
func (l *layer) projGradParts(in *inputRows, dProj *tensor.Matrix) ([][]float32, error) {
	if in == nil {
		return nil, nil
	}
	if dProj == nil || len(dProj.Data) != len(in.proj) {
		return nil, fmt.Errorf("lstm: lstm %s: input gradient %s for %d projected values", l.Wx.Name, dProj.Shape(), len(in.proj))
	}
	n, size := l.pool.parts(), len(in.proj)
	if cap(l.dProjParts) < n*size {
		l.dProjParts = make([]float32, n*size)
	}
	l.dProjParts = l.dProjParts[:n*size]
	clear(l.dProjParts)
	var parts [][]float32
	for k := range n {
		parts = append(parts, l.dProjParts[k*size:(k+1)*size])
	}
	return parts, nil
}

// recurrentGrad adds the recurrent weight gradient of all steps at once: one big gemm of dG
// with the h_{t-1} of each row. Time-major, those are hs rows [0, T*B); packed, the rows a step
// continues are a prefix of the previous step's, so they are gathered into hPrev first.
func (l *layer) recurrentGrad() error {
	T, H := l.t, l.Hidden
	N := l.stepOff[T]
	prevH := l.hs.RowSlice(0, N)
	if l.packed() {
		l.hPrev.Reshape(N, H)
		for t := 0; t < T; t++ {
			n, off, prev := l.stepRows[t], l.stepOff[t], l.prevRow(t)
			copy(l.hPrev.Data[off*H:(off+n)*H], l.hs.Data[prev*H:(prev+n)*H])
		}
		prevH = l.hPrev
	}
	return l.eng.MatMul(l.Wh.Grad, prevH, true, l.dGates, false, 1, 1)
}

// cellBackward back-propagates one active cell. a holds the activations
// [i j f o]; dcNext carries dL/dc from the next step in and dL/dc_prev out.
func cellBackward(a, cPrev, tc, dhExt, dcExt, dhNext, dcNext, dg []float32) {
	H := len(tc)
	ai, aj, af, ao := a[:H], a[H:2*H], a[2*H:3*H], a[3*H:4*H]
	di, dj, df, do := dg[:H], dg[H:2*H], dg[2*H:3*H], dg[3*H:4*H]
	for k := 0; k < H; k++ {
		i, j, f, o, t := ai[k], aj[k], af[k], ao[k], tc[k]
		dht := dhExt[k] + dhNext[k]
		dct := dcNext[k] + dht*o*(1-t*t)
		if dcExt != nil {
			dct += dcExt[k]
		}
		do[k] = dht * t * o * (1 - o)
		di[k] = dct * j * i * (1 - i)
		dj[k] = dct * i * (1 - j*j)
		df[k] = dct * cPrev[k] * f * (1 - f)
		dcNext[k] = dct * f
	}
}

// Step advances B sequences by one step in place: h and c (B x Hidden) are
// the carried state, x (B x In) the inputs, gates (B x 4Hidden) scratch.
// It allocates nothing.
func (l *layer) Step(x, h, c, gates *tensor.Matrix) error {
	if x == nil || h == nil || c == nil || gates == nil {
		return fmt.Errorf("lstm: lstm %s step: nil matrix", l.Wx.Name)
	}
	B := x.Rows
	// Checked without formatting on the happy path: Step must not allocate.
	if wrongShape(x, B, l.In) || wrongShape(h, B, l.Hidden) || wrongShape(c, B, l.Hidden) || wrongShape(gates, B, 4*l.Hidden) {
		return fmt.Errorf("lstm: lstm %s step: input %s, h %s, c %s, gates %s; want Bx%d, Bx%d, Bx%d, Bx%d",
			l.Wx.Name, x.Shape(), h.Shape(), c.Shape(), gates.Shape(), l.In, l.Hidden, l.Hidden, 4*l.Hidden)
	}
	if err := l.eng.MatMul(gates, x, false, l.Wx.Value, false, 1, 0); err != nil {
		return err
	}
	nn.AddRowVector(gates, l.B.Value.Data)
	return l.stepFromInput(gates, h, c)
}

// stepFromInput finishes a step whose gates already hold x·Wx + b: it adds
// the recurrent product and runs the cells, updating h and c in place.
func (l *layer) stepFromInput(gates, h, c *tensor.Matrix) error {
	if err := l.eng.MatMul(gates, h, false, l.Wh.Value, false, 1, 1); err != nil {
		return err
	}
	l.pool.run(cellJob{hidden: l.Hidden, forget: l.ForgetBias, pureGo: l.pureGo, gates: gates.Data, cPrev: c.Data, c: c.Data, h: h.Data}, h.Rows)
	return nil
}

// wrongShape reports whether m is not rows x cols.
func wrongShape(m *tensor.Matrix, rows, cols int) bool { return m.Rows != rows || m.Cols != cols }
