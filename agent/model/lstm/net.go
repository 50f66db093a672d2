package lstm

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/blas"

	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// NetConfig describes a Net: embeddingSum -> LSTM -> linear heads.
type NetConfig struct {
	// InputVocabs holds the vocabulary size of each input feature, e.g.
	// {base+1, move+1, 2+1, base+1} for the observation and the three
	// previous-action components (the last index of each meaning "none").
	InputVocabs []int
	// Hidden is the LSTM size (128 in the paper); the embedding has the
	// same width unless EmbedDim is set.
	Hidden   int
	EmbedDim int
	// HeadSizes are the output widths of the linear heads (e.g. |A| logits, 1 for V).
	HeadSizes []int
	// StateHeads[i] makes head i read the full state [c_t, h_t] instead of
	// h_t, as the reference value head V = w·[1, c, h] does. Nil: all read h_t.
	StateHeads []bool
	// Seed makes the initialisation deterministic.
	Seed int64
	// EmbedStd is the truncated-normal std of the embeddings (default 0.01).
	EmbedStd float64
	// Engine runs the matrix products; nil resolves one from SPARSEPCL_BLAS.
	Engine *tensor.Engine
}

// seqHead is one linear head. For a state head W is 2H x Size: rows [0,H)
// multiply c_t and rows [H,2H) multiply h_t, so no [c,h] concatenation is
// ever formed.
type seqHead struct {
	size  int
	state bool
	w, b  *nn.Param
	out   *tensor.Matrix
	// Packed (projected) training: the head output and its gradient in
	// packed row order.
	outP, dP *tensor.Matrix
}

// Net is the recurrent network of the algorithmic tasks. Heads are
// initialised Glorot-uniform (the reference OutputProjectionWrapper), state
// heads truncated-normal with std 0.01 (the reference value head), biases 0.
//
// Training: Forward over a time-major batch, then Backward with the loss
// gradient of each head. Sampling: NewState, then Step once per time step.
// Both modes compute the same function.
type Net struct {
	cfg   NetConfig
	eng   *tensor.Engine
	emb   *embeddingSum
	lstm  *layer
	heads []*seqHead
	// Test switches: pureGo forces the Go fallbacks of the C kernels,
	// directStep the unprojected Step path, trainInput the input path of
	// Forward (zero: chosen by projectedTraining).
	pureGo, directStep bool
	trainInput         inputPath

	// training caches
	t, b      int
	lengths   []int
	h, c      *tensor.Matrix
	dH, dC    *tensor.Matrix
	projected bool            // the last Forward used the projected tables in train
	train     inputProjection // tables of the last projected Forward
	pack      packing         // row order of the last projected Forward
	tokens    []int32         // tokens of the last projected Forward, packed
	dProj     *tensor.Matrix  // (V+1) x 4H gradient of train.proj
	dStack    *tensor.Matrix  // (V+1) x E gradient of train.stack
}

// inputPath selects how Forward computes the LSTM input pre-activations.
type inputPath int

const (
	autoInput      inputPath = iota // projectedTraining decides
	projectedInput                  // gather rows of projected tables
	directInput                     // embedding sums, then one T*B-row gemm
)

// inputProjection holds the embedding rows and their projection through
// the LSTM input kernel: stack = [E_0; ...; E_{F-1}; bias] ((V+1) x E,
// V = Σ vocabularies) and proj = stack·Wx with the LSTM bias added to its
// last row. Since the LSTM input is x = bias + Σ_f E_f[tok_f],
//
//	x·Wx + b = (bias·Wx + b) + Σ_f (E_f·Wx)[tok_f] = proj[V] + Σ_f proj[offs[f] + tok_f],
//
// so a gather-add of F+1 rows replaces a row of an E x 4H product.
type inputProjection struct {
	stack, proj *tensor.Matrix
	offs        []int32 // first stack row of each feature
}

// NewNet builds and initialises a Net.
func NewNet(cfg NetConfig) (*Net, error) {
	if cfg.Hidden <= 0 {
		return nil, fmt.Errorf("lstm: net: Hidden must be positive, got %d", cfg.Hidden)
	}
	if len(cfg.HeadSizes) == 0 {
		return nil, fmt.Errorf("lstm: net: no heads")
	}
	if cfg.StateHeads != nil && len(cfg.StateHeads) != len(cfg.HeadSizes) {
		return nil, fmt.Errorf("lstm: net: %d StateHeads flags for %d heads", len(cfg.StateHeads), len(cfg.HeadSizes))
	}
	if cfg.EmbedDim == 0 {
		cfg.EmbedDim = cfg.Hidden
	}
	if cfg.EmbedStd == 0 {
		cfg.EmbedStd = 0.01
	}
	cfg.InputVocabs = append([]int(nil), cfg.InputVocabs...)
	cfg.HeadSizes = append([]int(nil), cfg.HeadSizes...)
	if cfg.Engine == nil {
		eng, err := tensor.NewEngine()
		if err != nil {
			return nil, fmt.Errorf("lstm: net: %w", err)
		}
		cfg.Engine = eng
	}
	n := &Net{cfg: cfg, eng: cfg.Engine}
	var err error
	if n.emb, err = newEmbeddingSum("embed", cfg.InputVocabs, cfg.EmbedDim, cfg.EmbedStd, nn.NewRand(cfg.Seed, 1)); err != nil {
		return nil, fmt.Errorf("lstm: net: %w", err)
	}
	if n.lstm, err = newLayer(n.eng, "lstm", cfg.EmbedDim, cfg.Hidden, nn.NewRand(cfg.Seed, 2)); err != nil {
		return nil, fmt.Errorf("lstm: net: %w", err)
	}
	H := cfg.Hidden
	for i, size := range cfg.HeadSizes {
		if size <= 0 {
			return nil, fmt.Errorf("lstm: net: head %d has size %d, want > 0", i, size)
		}
		hd := &seqHead{size: size, state: cfg.StateHeads != nil && cfg.StateHeads[i],
			out: tensor.New(0, size), outP: tensor.New(0, size), dP: tensor.New(0, size)}
		in := H
		if hd.state {
			in = 2 * H
		}
		hd.w = nn.NewParam(fmt.Sprintf("head%d.W", i), in, size)
		hd.b = nn.NewParam(fmt.Sprintf("head%d.b", i), 1, size)
		rng := nn.NewRand(cfg.Seed, uint64(10+i))
		if hd.state {
			nn.TruncatedNormal(hd.w.Value, 0.01, rng)
		} else {
			nn.GlorotUniform(hd.w.Value, in, size, rng)
		}
		n.heads = append(n.heads, hd)
	}
	n.dH, n.dC = tensor.New(0, H), tensor.New(0, H)
	n.dProj, n.dStack = tensor.New(0, 4*H), tensor.New(0, cfg.EmbedDim)
	return n, nil
}

// Head returns head i's weight and bias (for initialisations beyond the default).
func (n *Net) Head(i int) (w, b *nn.Param) { return n.heads[i].w, n.heads[i].b }

// setPureGo switches every kernel of n to its Go fallback (tests).
func (n *Net) setPureGo(on bool) { n.pureGo, n.lstm.pureGo = on, on }

// Config returns the configuration with defaults filled in.
func (n *Net) Config() NetConfig { return n.cfg }

// Engine returns the BLAS engine the network runs on.
func (n *Net) Engine() *tensor.Engine { return n.eng }

// Params returns all parameters: embedding tables and bias, LSTM Wx, Wh, b,
// then W and b of each head. Names are stable ("embed.table0", "lstm.Wx",
// "head1.b", ...).
func (n *Net) Params() []*nn.Param {
	ps := append(n.emb.Params(), n.lstm.Params()...)
	for _, h := range n.heads {
		ps = append(ps, h.w, h.b)
	}
	return ps
}

// applyHead writes head hd of state (h, c) into out.
func (n *Net) applyHead(hd *seqHead, h, c, out *tensor.Matrix) error {
	H := n.cfg.Hidden
	if hd.state {
		if err := n.headMul(out, c, false, hd.w.Value.RowSlice(0, H), 0); err != nil {
			return err
		}
		if err := n.headMul(out, h, false, hd.w.Value.RowSlice(H, 2*H), 1); err != nil {
			return err
		}
	} else if err := n.headMul(out, h, false, hd.w.Value, 0); err != nil {
		return err
	}
	nn.AddRowVector(out, hd.b.Value.Data)
	return nil
}

// headMul sets dst = op(a)·w + beta·dst as Engine.MatMul does, running a
// one-column w (a value head, or its weight gradient) as a matrix-vector
// product: at T*B rows OpenBLAS runs sgemm with n = 1 about half as fast as
// sgemv.
func (n *Net) headMul(dst, a *tensor.Matrix, transA bool, w *tensor.Matrix, beta float32) error {
	m, k := a.Rows, a.Cols
	if transA {
		m, k = k, m
	}
	if w.Cols != 1 || m == 0 || k == 0 || w.Rows != k || dst.Rows != m || dst.Cols != 1 {
		return n.eng.MatMul(dst, a, transA, w, false, 1, beta)
	}
	op := blas.NoTrans
	if transA {
		op = blas.Trans
	}
	n.eng.BLAS().Sgemv(op, a.Rows, a.Cols, 1, a.Data, a.Cols, w.Data, 1, beta, dst.Data, 1)
	return nil
}

// Forward runs the network on tokens (T*B*F values: row t*B+b holds the F
// input tokens of step t of sequence b) for sequences of lengths[b] in 1..T
// steps, from a zero state. It returns one T*B x HeadSizes[i] matrix per
// head, owned by n and valid until the next Forward. Rows of steps past a
// sequence's end are zero and Backward ignores their gradient.
func (n *Net) Forward(tokens []int32, T, B int, lengths []int) ([]*tensor.Matrix, error) {
	if err := checkLengths(T, B, lengths); err != nil {
		return nil, fmt.Errorf("lstm: net forward: %w", err)
	}
	if F := n.emb.Features(); len(tokens) != T*B*F {
		return nil, fmt.Errorf("lstm: net forward: %d tokens, want T*B*F = %d*%d*%d = %d", len(tokens), T, B, F, T*B*F)
	}
	var h, c *tensor.Matrix
	var err error
	n.projected = n.projectedTraining(T * B)
	if n.projected {
		h, c, err = n.forwardProjected(tokens, T, B, lengths)
	} else {
		var x *tensor.Matrix
		if x, err = n.emb.Forward(tokens, T*B); err == nil {
			h, c, err = n.lstm.Forward(x, T, B, lengths)
		}
	}
	if err != nil {
		n.h = nil
		return nil, fmt.Errorf("lstm: net forward: %w", err)
	}
	n.t, n.b, n.h, n.c = T, B, h, c
	n.lengths = append(n.lengths[:0], lengths...)
	outs := make([]*tensor.Matrix, len(n.heads))
	for i, hd := range n.heads {
		hd.out.Reshape(T*B, hd.size)
		if n.projected {
			hd.outP.Reshape(h.Rows, hd.size)
			if err := n.applyHead(hd, h, c, hd.outP); err != nil {
				return nil, fmt.Errorf("lstm: net forward head %d: %w", i, err)
			}
			hd.out.Zero()
			n.pack.unpack(hd.out, hd.outP)
			outs[i] = hd.out
			continue
		}
		if err := n.applyHead(hd, h, c, hd.out); err != nil {
			return nil, fmt.Errorf("lstm: net forward head %d: %w", i, err)
		}
		for t := 0; t < T; t++ {
			for b := 0; b < B; b++ {
				if t >= lengths[b] {
					clear(hd.out.Row(t*B + b))
				}
			}
		}
		outs[i] = hd.out
	}
	return outs, nil
}

// Backward takes dL/d(head output) for each head (same shapes as Forward's
// outputs) and accumulates every parameter gradient. Rows of inactive steps
// are ignored.
func (n *Net) Backward(dHeads []*tensor.Matrix) error {
	if n.h == nil {
		return fmt.Errorf("lstm: net backward: Backward before Forward")
	}
	if len(dHeads) != len(n.heads) {
		return fmt.Errorf("lstm: net backward: %d head gradients for %d heads", len(dHeads), len(n.heads))
	}
	T, B, H := n.t, n.b, n.cfg.Hidden
	for i, d := range dHeads {
		if err := tensor.CheckShape(d, T*B, n.heads[i].size, "lstm: net backward: head", strconv.Itoa(i), "gradient"); err != nil {
			return err
		}
	}
	// Every head writes dH (state heads dC too); the first write to each
	// overwrites (beta 0), which saves clearing T*B x H buffers.
	// Projected (packed) training holds active rows only, in packed order.
	rows := n.h.Rows
	n.dH.Reshape(rows, H)
	var dC *tensor.Matrix
	betaH, betaC := float32(0), float32(0)
	for i, hd := range n.heads {
		d := dHeads[i]
		bg := hd.b.Grad.Data
		if n.projected {
			hd.dP.Reshape(rows, hd.size)
			n.pack.pack(hd.dP, d)
			d = hd.dP
			nn.AddColumnSums(bg, d)
		} else {
			// Inactive rows have h = c = 0, so they add nothing to dW; the
			// bias sum skips them explicitly.
			for t := 0; t < T; t++ {
				for b := 0; b < B; b++ {
					if t < n.lengths[b] {
						for j, v := range d.Row(t*B + b) {
							bg[j] += v
						}
					}
				}
			}
		}
		var err error
		if hd.state {
			if dC == nil {
				dC = n.dC
				dC.Reshape(rows, H)
			}
			wc, wh := hd.w.Value.RowSlice(0, H), hd.w.Value.RowSlice(H, 2*H)
			err = firstErr(
				n.headMul(hd.w.Grad.RowSlice(0, H), n.c, true, d, 1),
				n.headMul(hd.w.Grad.RowSlice(H, 2*H), n.h, true, d, 1),
				n.eng.MatMul(dC, d, false, wc, true, 1, betaC),
				n.eng.MatMul(n.dH, d, false, wh, true, 1, betaH))
			betaC = 1
		} else {
			err = firstErr(
				n.headMul(hd.w.Grad, n.h, true, d, 1),
				n.eng.MatMul(n.dH, d, false, hd.w.Value, true, 1, betaH))
		}
		betaH = 1
		if err != nil {
			return fmt.Errorf("lstm: net backward head %d: %w", i, err)
		}
	}
	if n.projected {
		if err := n.backwardProjected(dC); err != nil {
			return fmt.Errorf("lstm: net backward: %w", err)
		}
		return nil
	}
	dx, err := n.lstm.Backward(n.dH, dC)
	if err != nil {
		return fmt.Errorf("lstm: net backward: %w", err)
	}
	if err := n.emb.Backward(dx); err != nil {
		return fmt.Errorf("lstm: net backward: %w", err)
	}
	return nil
}

// projectedTraining reports whether Forward over rows = T*B rows computes
// the LSTM input through projected tables (see inputProjection). That
// trades three rows x E x 4H gemms (x·Wx, dWx and dx) for three
// (V+1) x E x 4H ones plus a gather and a scatter of F+1 rows of 4H per
// input row: it pays when V+1 is well below rows and F+1 well below E.
// Huge vocabularies or many features keep the direct path.
func (n *Net) projectedTraining(rows int) bool {
	switch n.trainInput {
	case projectedInput:
		return true
	case directInput:
		return false
	}
	V := n.vocabRows()
	return 2*(V+1) <= rows && 4*(len(n.emb.Vocabs)+1) <= n.emb.Dim
}

// vocabRows is V, the total number of embedding rows.
func (n *Net) vocabRows() int {
	V := 0
	for _, v := range n.emb.Vocabs {
		V += v
	}
	return V
}

// forwardProjected runs the LSTM over tokens with its input pre-activations
// gathered from freshly projected tables (n.train), which Backward reuses.
func (n *Net) forwardProjected(tokens []int32, T, B int, lengths []int) (h, c *tensor.Matrix, err error) {
	if err := n.checkTokens(tokens); err != nil {
		return nil, nil, err
	}
	if err := n.project(&n.train); err != nil {
		return nil, nil, err
	}
	// Packed by step, longest sequences first: every product and cell of
	// the recurrence and the heads runs on active rows only.
	n.pack.build(T, B, lengths)
	F := len(n.emb.Vocabs)
	N := n.pack.off[T]
	if cap(n.tokens) < N*F {
		n.tokens = make([]int32, N*F)
	}
	n.tokens = n.tokens[:N*F]
	for t := 0; t < T; t++ {
		for i, b := range n.pack.perm[:n.pack.rows[t]] {
			copy(n.tokens[(n.pack.off[t]+i)*F:(n.pack.off[t]+i+1)*F], tokens[(t*B+b)*F:(t*B+b+1)*F])
		}
	}
	n.lstm.beginPacked(B, n.pack.rows)
	return n.lstm.recur(n.inputRows())
}

// packing orders the active rows of a time-major batch by step, the
// longest sequences first: packed row off[t]+i holds step t of sequence
// perm[i], for i < rows[t], the number of sequences still running at t.
// Since rows[t] never grows, the state step t continues is a prefix of
// step t-1's rows.
type packing struct {
	B    int
	perm []int // sequences by decreasing length (stable)
	rows []int // T entries
	off  []int // T+1 entries; off[T] is the number of active rows
}

func (p *packing) build(T, B int, lengths []int) {
	p.B = B
	p.perm = p.perm[:0]
	for b := 0; b < B; b++ {
		p.perm = append(p.perm, b)
	}
	slices.SortStableFunc(p.perm, func(a, b int) int { return cmp.Compare(lengths[b], lengths[a]) })
	p.rows, p.off = p.rows[:0], append(p.off[:0], 0)
	active := B
	for t := 0; t < T; t++ {
		for active > 0 && lengths[p.perm[active-1]] <= t {
			active--
		}
		p.rows = append(p.rows, active)
		p.off = append(p.off, p.off[t]+active)
	}
}

// unpack copies packed rows src into their time-major rows of dst
// (T*B rows), leaving the other rows untouched.
func (p *packing) unpack(dst, src *tensor.Matrix) {
	for t, n := range p.rows {
		for i, b := range p.perm[:n] {
			copy(dst.Row(t*p.B+b), src.Row(p.off[t]+i))
		}
	}
}

// pack copies the active time-major rows of src into packed order in dst.
func (p *packing) pack(dst, src *tensor.Matrix) {
	for t, n := range p.rows {
		for i, b := range p.perm[:n] {
			copy(dst.Row(p.off[t]+i), src.Row(t*p.B+b))
		}
	}
}

// inputRows is the input source of the last projected Forward.
func (n *Net) inputRows() *inputRows {
	p := &n.train
	return &inputRows{proj: p.proj.Data, bias: p.proj.Row(p.proj.Rows - 1), tokens: n.tokens, offs: p.offs}
}

// backwardProjected finishes Backward after a projected Forward. With
// dG = dL/d(x·Wx + b) and dP[k] = Σ of the rows of dG whose input used
// stack row k (every row uses the bias row V):
//
//	dWx = Σ_r x_rᵀ dG_r = stackᵀ·dP,  db = dP[V],  d(stack) = dP·Wxᵀ,
//
// where d(stack) holds the gradients of the table rows and the embedding bias.
func (n *Net) backwardProjected(dC *tensor.Matrix) error {
	l, e, p := n.lstm, n.emb, &n.train
	V := p.stack.Rows - 1
	n.dProj.Reshape(V+1, 4*l.Hidden)
	n.dProj.Zero()
	if _, err := l.backwardGates(n.dH, dC, n.inputRows(), n.dProj); err != nil {
		return err
	}
	if err := n.eng.MatMul(l.Wx.Grad, p.stack, true, n.dProj, false, 1, 1); err != nil {
		return err
	}
	for j, v := range n.dProj.Row(V) {
		l.B.Grad.Data[j] += v
	}
	n.dStack.Reshape(V+1, e.Dim)
	if err := n.eng.MatMul(n.dStack, n.dProj, false, l.Wx.Value, true, 1, 0); err != nil {
		return err
	}
	off := 0
	for _, t := range e.Tables {
		for i, v := range n.dStack.Data[off*e.Dim : (off+t.Grad.Rows)*e.Dim] {
			t.Grad.Data[i] += v
		}
		off += t.Grad.Rows
	}
	for j, v := range n.dStack.Row(V) {
		e.Bias.Grad.Data[j] += v
	}
	return nil
}

// checkTokens validates rows x F tokens against the vocabularies.
func (n *Net) checkTokens(tokens []int32) error {
	e := n.emb
	F := len(e.Vocabs)
	for i, tok := range tokens {
		if f := i % F; tok < 0 || int(tok) >= e.Vocabs[f] {
			return fmt.Errorf("embedding %s: row %d feature %d: token %d outside vocabulary [0,%d)",
				e.Bias.Name, i/F, f, tok, e.Vocabs[f])
		}
	}
	return nil
}

// project (re)builds p from the current parameters, allocating its buffers
// on first use.
func (n *Net) project(p *inputProjection) error {
	e, l := n.emb, n.lstm
	V := n.vocabRows()
	if p.stack == nil {
		p.stack, p.proj = tensor.New(V+1, e.Dim), tensor.New(V+1, 4*l.Hidden)
		p.offs = make([]int32, len(e.Vocabs))
		off := 0
		for f, v := range e.Vocabs {
			p.offs[f] = int32(off)
			off += v
		}
	}
	if wrongShape(p.stack, V+1, e.Dim) || wrongShape(p.proj, V+1, 4*l.Hidden) || len(p.offs) != len(e.Vocabs) {
		return fmt.Errorf("projection buffers %s and %s, want %dx%d and %dx%d (state from another network?)",
			p.stack.Shape(), p.proj.Shape(), V+1, e.Dim, V+1, 4*l.Hidden)
	}
	off := 0
	for _, t := range e.Tables {
		copy(p.stack.Data[off*e.Dim:], t.Value.Data)
		off += t.Value.Rows
	}
	copy(p.stack.Row(V), e.Bias.Value.Data)
	if err := n.eng.MatMul(p.proj, p.stack, false, l.Wx.Value, false, 1, 0); err != nil {
		return err
	}
	biasRow := p.proj.Row(V)
	for j, v := range l.B.Value.Data {
		biasRow[j] += v
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// State is the carried state of B sequences in step mode, with the
// scratch buffers one Step needs, so stepping allocates nothing.
type State struct {
	B     int
	H, C  *tensor.Matrix // B x Hidden
	x     *tensor.Matrix
	gates *tensor.Matrix

	// Projected-input step (see Net.Step), rebuilt from the parameters
	// on every Step so it can never be stale.
	inputs inputProjection
}

// NewState returns a zero state for B sequences.
func (n *Net) NewState(B int) *State {
	return &State{
		B: B, H: tensor.New(B, n.cfg.Hidden), C: tensor.New(B, n.cfg.Hidden),
		x: tensor.New(B, n.cfg.EmbedDim), gates: tensor.New(B, 4*n.cfg.Hidden),
	}
}

// Reset zeroes the state of sequence b (a new episode in that slot).
func (s *State) Reset(b int) error {
	if b < 0 || b >= s.B {
		return fmt.Errorf("lstm: seqstate reset: index %d outside 0..%d", b, s.B-1)
	}
	clear(s.H.Row(b))
	clear(s.C.Row(b))
	return nil
}

// ResetAll zeroes the state of every sequence.
func (s *State) ResetAll() {
	s.H.Zero()
	s.C.Zero()
}

// Step advances every sequence of st by one step on tokens (B*F values)
// and writes head i into heads[i] (B x HeadSizes[i], caller-owned).
func (n *Net) Step(st *State, tokens []int32, heads []*tensor.Matrix) error {
	if st == nil {
		return fmt.Errorf("lstm: net step: nil state")
	}
	if st.H == nil || wrongShape(st.H, st.B, n.cfg.Hidden) {
		return fmt.Errorf("lstm: net step: state shape %s, want %dx%d (state from another network?)", st.H.Shape(), st.B, n.cfg.Hidden)
	}
	if F := n.emb.Features(); len(tokens) != st.B*F {
		return fmt.Errorf("lstm: net step: %d tokens, want B*F = %d*%d = %d", len(tokens), st.B, F, st.B*F)
	}
	if len(heads) != len(n.heads) {
		return fmt.Errorf("lstm: net step: %d head outputs for %d heads", len(heads), len(n.heads))
	}
	for i, hd := range n.heads {
		if heads[i] == nil || wrongShape(heads[i], st.B, hd.size) {
			return fmt.Errorf("lstm: net step: head %d output: shape %s, want %dx%d", i, heads[i].Shape(), st.B, hd.size)
		}
	}
	if n.projectedStep(st.B) {
		if err := n.projectInputs(st, tokens); err != nil {
			return fmt.Errorf("lstm: net step: %w", err)
		}
		if err := n.lstm.stepFromInput(st.gates, st.H, st.C); err != nil {
			return fmt.Errorf("lstm: net step: %w", err)
		}
	} else {
		if err := n.emb.Lookup(st.x, tokens); err != nil {
			return fmt.Errorf("lstm: net step: %w", err)
		}
		if err := n.lstm.Step(st.x, st.H, st.C, st.gates); err != nil {
			return fmt.Errorf("lstm: net step: %w", err)
		}
	}
	for i, hd := range n.heads {
		if err := n.applyHead(hd, st.H, st.C, heads[i]); err != nil {
			return fmt.Errorf("lstm: net step head %d: %w", i, err)
		}
	}
	return nil
}

// projectedStep reports whether a step over B sequences computes the LSTM
// input projection through projected tables (see inputProjection): one
// (V+1) x E x 4H product and a gather-add of rows replace the B x E x 4H
// product; that pays when V+1 is well below B.
func (n *Net) projectedStep(B int) bool {
	return !n.directStep && 2*(n.vocabRows()+1) <= B
}

// projectInputs writes x·Wx + b for the embedding sums x of tokens into
// st.gates via freshly projected tables.
func (n *Net) projectInputs(st *State, tokens []int32) error {
	p := &st.inputs
	if err := n.project(p); err != nil {
		return err
	}
	if err := n.checkTokens(tokens); err != nil {
		return err
	}
	gatherRows(st.gates, p.proj, p.proj.Row(p.proj.Rows-1), tokens, p.offs, n.pureGo)
	return nil
}

// inputRows is a source of LSTM input pre-activations: row r of a batch
// is bias + Σ_f proj[offs[f] + tokens[r*F+f]] (tokens validated).
type inputRows struct {
	proj, bias   []float32
	tokens, offs []int32
}

// addRow adds the input pre-activations of one row with tokens toks to g.
func (in *inputRows) addRow(g []float32, toks []int32) {
	W := len(g)
	_ = in.bias[W-1]
	for j, v := range in.bias[:W] {
		g[j] += v
	}
	for f, tok := range toks {
		k := int(in.offs[f]+tok) * W
		src := in.proj[k : k+W]
		for j, v := range src {
			g[j] += v
		}
	}
}

// scatterRow is the adjoint of addRow: it adds dg to the rows of dProj
// (laid out as proj) that addRow read for tokens toks, bias row last.
func (in *inputRows) scatterRow(dProj, dg []float32, toks []int32) {
	W := len(dg)
	bias := dProj[len(dProj)-W:]
	for j, v := range dg {
		bias[j] += v
	}
	for f, tok := range toks {
		k := int(in.offs[f]+tok) * W
		dst := dProj[k : k+W]
		for j, v := range dg {
			dst[j] += v
		}
	}
}

// gatherRows sets out[r] = bias + Σ_f proj[offs[f] + tokens[r*F+f]] on
// validated tokens.
func gatherRows(out, proj *tensor.Matrix, bias []float32, tokens, offs []int32, pureGo bool) {
	F, W := len(offs), out.Cols
	if haveCellKernel && !pureGo {
		gatherKernel(out.Data, proj.Data, bias, tokens, offs, out.Rows, F, W)
		return
	}
	in := inputRows{proj: proj.Data, bias: bias, offs: offs}
	for r := 0; r < out.Rows; r++ {
		row := out.Row(r)
		clear(row)
		in.addRow(row, tokens[r*F:(r+1)*F])
	}
}
