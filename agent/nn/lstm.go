package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// LSTM is TF's BasicLSTMCell/LSTMCell without peepholes, run over a
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
// them is active.
type LSTM struct {
	In, Hidden int
	ForgetBias float32
	Wx, Wh, B  *Param
	eng        *tensor.Engine
	pool       *cellPool // runs the elementwise gate arithmetic; nil: caller only
	pureGo     bool      // use the Go cell functions even with the C kernels built in

	// Training caches (Forward), reused across calls.
	t, b    int
	lengths []int
	x       *tensor.Matrix
	gates   *tensor.Matrix // T*B x 4H gate activations σ(i) tanh(j) σ(f+1) σ(o)
	hs, cs  *tensor.Matrix // (T+1)*B x H; block 0 is the initial (zero) state
	tanhC   *tensor.Matrix // T*B x H

	// Backward buffers.
	dGates         *tensor.Matrix
	dhNext, dcNext *tensor.Matrix
	dx             *tensor.Matrix
}

// NewLSTM returns an LSTM with TF's default initialisation.
func NewLSTM(eng *tensor.Engine, name string, in, hidden int, rng *rand.Rand) (*LSTM, error) {
	if eng == nil {
		return nil, fmt.Errorf("nn: lstm %q: nil engine", name)
	}
	if in <= 0 || hidden <= 0 {
		return nil, fmt.Errorf("nn: lstm %q: sizes must be positive, got in=%d hidden=%d", name, in, hidden)
	}
	l := &LSTM{
		In: in, Hidden: hidden, ForgetBias: 1, eng: eng, pool: newCellPool(),
		Wx: NewParam(name+".Wx", in, 4*hidden),
		Wh: NewParam(name+".Wh", hidden, 4*hidden),
		B:  NewParam(name+".b", 1, 4*hidden),
	}
	limit := math.Sqrt(6 / float64(in+hidden+4*hidden))
	for _, w := range []*tensor.Matrix{l.Wx.Value, l.Wh.Value} {
		for i := range w.Data {
			w.Data[i] = float32((2*rng.Float64() - 1) * limit)
		}
	}
	l.gates, l.hs, l.cs, l.tanhC = tensor.New(0, 4*hidden), tensor.New(0, hidden), tensor.New(0, hidden), tensor.New(0, hidden)
	l.dGates, l.dhNext, l.dcNext, l.dx = tensor.New(0, 4*hidden), tensor.New(0, hidden), tensor.New(0, hidden), tensor.New(0, in)
	return l, nil
}

// Params returns Wx, Wh, b.
func (l *LSTM) Params() []*Param { return []*Param{l.Wx, l.Wh, l.B} }

// checkLengths validates a batch description.
func checkLengths(T, B int, lengths []int) error {
	if T <= 0 || B <= 0 {
		return fmt.Errorf("nn: sequence batch T=%d B=%d: both must be positive", T, B)
	}
	if len(lengths) != B {
		return fmt.Errorf("nn: %d lengths for a batch of B=%d sequences", len(lengths), B)
	}
	for b, n := range lengths {
		if n < 1 || n > T {
			return fmt.Errorf("nn: lengths[%d] = %d outside 1..T=%d", b, n, T)
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
// Forward). All input projections are one gemm; each step adds one
// recurrent gemm.
func (l *LSTM) Forward(x *tensor.Matrix, T, B int, lengths []int) (h, c *tensor.Matrix, err error) {
	if err := checkLengths(T, B, lengths); err != nil {
		return nil, nil, fmt.Errorf("nn: lstm %s: %w", l.Wx.Name, err)
	}
	if err := tensor.CheckShape("nn: lstm "+l.Wx.Name+" input", x, T*B, l.In); err != nil {
		return nil, nil, err
	}
	H := l.Hidden
	l.t, l.b, l.x = T, B, x
	l.lengths = append(l.lengths[:0], lengths...)
	l.gates.Reshape(T*B, 4*H)
	l.hs.Reshape((T+1)*B, H)
	l.cs.Reshape((T+1)*B, H)
	l.tanhC.Reshape(T*B, H)
	clear(l.hs.Data[:B*H])
	clear(l.cs.Data[:B*H])

	if err := l.eng.MatMul(l.gates, x, false, l.Wx.Value, false, 1, 0); err != nil {
		return nil, nil, err
	}
	addRowVector(l.gates, l.B.Value.Data)
	for t := 0; t < T; t++ {
		gt := l.gates.RowSlice(t*B, (t+1)*B)
		if err := l.eng.MatMul(gt, l.hs.RowSlice(t*B, (t+1)*B), false, l.Wh.Value, false, 1, 1); err != nil {
			return nil, nil, err
		}
		l.pool.run(cellJob{
			hidden: H, forget: l.ForgetBias, t: t, lengths: l.lengths, pureGo: l.pureGo,
			gates: l.gates.Data[t*B*4*H : (t+1)*B*4*H],
			cPrev: l.cs.Data[t*B*H : (t+1)*B*H], c: l.cs.Data[(t+1)*B*H : (t+2)*B*H],
			h: l.hs.Data[(t+1)*B*H : (t+2)*B*H], tc: l.tanhC.Data[t*B*H : (t+1)*B*H],
		}, B)
	}
	return l.hs.RowSlice(B, (T+1)*B), l.cs.RowSlice(B, (T+1)*B), nil
}

// Backward takes the gradients of the loss w.r.t. the h and c returned by
// Forward (dc may be nil), accumulates the parameter gradients and returns
// dx (T*B x In, owned by l). Rows of inactive steps are ignored.
func (l *LSTM) Backward(dh, dc *tensor.Matrix) (*tensor.Matrix, error) {
	if l.x == nil {
		return nil, fmt.Errorf("nn: lstm %s: Backward before Forward", l.Wx.Name)
	}
	T, B, H := l.t, l.b, l.Hidden
	if err := tensor.CheckShape("nn: lstm "+l.Wx.Name+" dh", dh, T*B, H); err != nil {
		return nil, err
	}
	if dc != nil {
		if err := tensor.CheckShape("nn: lstm "+l.Wx.Name+" dc", dc, T*B, H); err != nil {
			return nil, err
		}
	}
	l.dGates.Reshape(T*B, 4*H)
	l.dhNext.Reshape(B, H)
	l.dcNext.Reshape(B, H)
	l.dhNext.Zero()
	l.dcNext.Zero()
	for t := T - 1; t >= 0; t-- {
		j := cellJob{
			backward: true, hidden: H, t: t, lengths: l.lengths, pureGo: l.pureGo,
			gates: l.gates.Data[t*B*4*H : (t+1)*B*4*H], cPrev: l.cs.Data[t*B*H : (t+1)*B*H],
			tc: l.tanhC.Data[t*B*H : (t+1)*B*H], dhExt: dh.Data[t*B*H : (t+1)*B*H],
			dhNext: l.dhNext.Data, dcNext: l.dcNext.Data, dGates: l.dGates.Data[t*B*4*H : (t+1)*B*4*H],
		}
		if dc != nil {
			j.dcExt = dc.Data[t*B*H : (t+1)*B*H]
		}
		l.pool.run(j, B)
		if t > 0 {
			if err := l.eng.MatMul(l.dhNext, l.dGates.RowSlice(t*B, (t+1)*B), false, l.Wh.Value, true, 1, 0); err != nil {
				return nil, err
			}
		}
	}
	// The weight gradients of all steps at once: two big gemms.
	if err := l.eng.MatMul(l.Wh.Grad, l.hs.RowSlice(0, T*B), true, l.dGates, false, 1, 1); err != nil {
		return nil, err
	}
	if err := l.eng.MatMul(l.Wx.Grad, l.x, true, l.dGates, false, 1, 1); err != nil {
		return nil, err
	}
	addColumnSums(l.B.Grad.Data, l.dGates)
	l.dx.Reshape(T*B, l.In)
	if err := l.eng.MatMul(l.dx, l.dGates, false, l.Wx.Value, true, 1, 0); err != nil {
		return nil, err
	}
	return l.dx, nil
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
func (l *LSTM) Step(x, h, c, gates *tensor.Matrix) error {
	if x == nil || h == nil || c == nil || gates == nil {
		return fmt.Errorf("nn: lstm %s step: nil matrix", l.Wx.Name)
	}
	B := x.Rows
	// Checked without formatting on the happy path: Step must not allocate.
	if wrongShape(x, B, l.In) || wrongShape(h, B, l.Hidden) || wrongShape(c, B, l.Hidden) || wrongShape(gates, B, 4*l.Hidden) {
		return fmt.Errorf("nn: lstm %s step: input %s, h %s, c %s, gates %s; want Bx%d, Bx%d, Bx%d, Bx%d",
			l.Wx.Name, x.Shape(), h.Shape(), c.Shape(), gates.Shape(), l.In, l.Hidden, l.Hidden, 4*l.Hidden)
	}
	if err := l.eng.MatMul(gates, x, false, l.Wx.Value, false, 1, 0); err != nil {
		return err
	}
	addRowVector(gates, l.B.Value.Data)
	return l.stepFromInput(gates, h, c)
}

// stepFromInput finishes a step whose gates already hold x·Wx + b: it adds
// the recurrent product and runs the cells, updating h and c in place.
func (l *LSTM) stepFromInput(gates, h, c *tensor.Matrix) error {
	if err := l.eng.MatMul(gates, h, false, l.Wh.Value, false, 1, 1); err != nil {
		return err
	}
	l.pool.run(cellJob{hidden: l.Hidden, forget: l.ForgetBias, pureGo: l.pureGo, gates: gates.Data, cPrev: c.Data, c: c.Data, h: h.Data}, h.Rows)
	return nil
}

// wrongShape reports whether m is not rows x cols.
func wrongShape(m *tensor.Matrix, rows, cols int) bool { return m.Rows != rows || m.Cols != cols }
