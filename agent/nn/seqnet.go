package nn

import (
	"fmt"

	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// SeqNetConfig describes a SeqNet: EmbeddingSum -> LSTM -> linear heads.
type SeqNetConfig struct {
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
	w, b  *Param
	out   *tensor.Matrix
}

// SeqNet is the recurrent network of the algorithmic tasks. Heads are
// initialised Glorot-uniform (the reference OutputProjectionWrapper), state
// heads truncated-normal with std 0.01 (the reference value head), biases 0.
//
// Training: Forward over a time-major batch, then Backward with the loss
// gradient of each head. Sampling: NewState, then Step once per time step.
// Both modes compute the same function.
type SeqNet struct {
	cfg   SeqNetConfig
	eng   *tensor.Engine
	emb   *EmbeddingSum
	lstm  *LSTM
	heads []*seqHead
	// Test switches: pureGo forces the Go fallbacks of the C kernels,
	// directStep the unprojected Step path.
	pureGo, directStep bool

	// training caches
	t, b    int
	lengths []int
	h, c    *tensor.Matrix
	dH, dC  *tensor.Matrix
}

// NewSeqNet builds and initialises a SeqNet.
func NewSeqNet(cfg SeqNetConfig) (*SeqNet, error) {
	if cfg.Hidden <= 0 {
		return nil, fmt.Errorf("nn: seqnet: Hidden must be positive, got %d", cfg.Hidden)
	}
	if len(cfg.HeadSizes) == 0 {
		return nil, fmt.Errorf("nn: seqnet: no heads")
	}
	if cfg.StateHeads != nil && len(cfg.StateHeads) != len(cfg.HeadSizes) {
		return nil, fmt.Errorf("nn: seqnet: %d StateHeads flags for %d heads", len(cfg.StateHeads), len(cfg.HeadSizes))
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
			return nil, fmt.Errorf("nn: seqnet: %w", err)
		}
		cfg.Engine = eng
	}
	n := &SeqNet{cfg: cfg, eng: cfg.Engine}
	var err error
	if n.emb, err = NewEmbeddingSum("embed", cfg.InputVocabs, cfg.EmbedDim, cfg.EmbedStd, NewRand(cfg.Seed, 1)); err != nil {
		return nil, fmt.Errorf("nn: seqnet: %w", err)
	}
	if n.lstm, err = NewLSTM(n.eng, "lstm", cfg.EmbedDim, cfg.Hidden, NewRand(cfg.Seed, 2)); err != nil {
		return nil, fmt.Errorf("nn: seqnet: %w", err)
	}
	H := cfg.Hidden
	for i, size := range cfg.HeadSizes {
		if size <= 0 {
			return nil, fmt.Errorf("nn: seqnet: head %d has size %d, want > 0", i, size)
		}
		hd := &seqHead{size: size, state: cfg.StateHeads != nil && cfg.StateHeads[i], out: tensor.New(0, size)}
		in := H
		if hd.state {
			in = 2 * H
		}
		hd.w = NewParam(fmt.Sprintf("head%d.W", i), in, size)
		hd.b = NewParam(fmt.Sprintf("head%d.b", i), 1, size)
		rng := NewRand(cfg.Seed, uint64(10+i))
		if hd.state {
			TruncatedNormal(hd.w.Value, 0.01, rng)
		} else {
			GlorotUniform(hd.w.Value, in, size, rng)
		}
		n.heads = append(n.heads, hd)
	}
	n.dH, n.dC = tensor.New(0, H), tensor.New(0, H)
	return n, nil
}

// setPureGo switches every kernel of n to its Go fallback (tests).
func (n *SeqNet) setPureGo(on bool) { n.pureGo, n.lstm.pureGo = on, on }

// Config returns the configuration with defaults filled in.
func (n *SeqNet) Config() SeqNetConfig { return n.cfg }

// Engine returns the BLAS engine the network runs on.
func (n *SeqNet) Engine() *tensor.Engine { return n.eng }

// Params returns all parameters: embedding tables and bias, LSTM Wx, Wh, b,
// then W and b of each head. Names are stable ("embed.table0", "lstm.Wx",
// "head1.b", ...).
func (n *SeqNet) Params() []*Param {
	ps := append(n.emb.Params(), n.lstm.Params()...)
	for _, h := range n.heads {
		ps = append(ps, h.w, h.b)
	}
	return ps
}

// applyHead writes head hd of state (h, c) into out.
func (n *SeqNet) applyHead(hd *seqHead, h, c, out *tensor.Matrix) error {
	H := n.cfg.Hidden
	if hd.state {
		if err := n.eng.MatMul(out, c, false, hd.w.Value.RowSlice(0, H), false, 1, 0); err != nil {
			return err
		}
		if err := n.eng.MatMul(out, h, false, hd.w.Value.RowSlice(H, 2*H), false, 1, 1); err != nil {
			return err
		}
	} else if err := n.eng.MatMul(out, h, false, hd.w.Value, false, 1, 0); err != nil {
		return err
	}
	addRowVector(out, hd.b.Value.Data)
	return nil
}

// Forward runs the network on tokens (T*B*F values: row t*B+b holds the F
// input tokens of step t of sequence b) for sequences of lengths[b] in 1..T
// steps, from a zero state. It returns one T*B x HeadSizes[i] matrix per
// head, owned by n and valid until the next Forward. Rows of steps past a
// sequence's end are zero and Backward ignores their gradient.
func (n *SeqNet) Forward(tokens []int32, T, B int, lengths []int) ([]*tensor.Matrix, error) {
	if err := checkLengths(T, B, lengths); err != nil {
		return nil, fmt.Errorf("nn: seqnet forward: %w", err)
	}
	if F := n.emb.Features(); len(tokens) != T*B*F {
		return nil, fmt.Errorf("nn: seqnet forward: %d tokens, want T*B*F = %d*%d*%d = %d", len(tokens), T, B, F, T*B*F)
	}
	x, err := n.emb.Forward(tokens, T*B)
	if err != nil {
		return nil, fmt.Errorf("nn: seqnet forward: %w", err)
	}
	h, c, err := n.lstm.Forward(x, T, B, lengths)
	if err != nil {
		return nil, fmt.Errorf("nn: seqnet forward: %w", err)
	}
	n.t, n.b, n.h, n.c = T, B, h, c
	n.lengths = append(n.lengths[:0], lengths...)
	outs := make([]*tensor.Matrix, len(n.heads))
	for i, hd := range n.heads {
		hd.out.Reshape(T*B, hd.size)
		if err := n.applyHead(hd, h, c, hd.out); err != nil {
			return nil, fmt.Errorf("nn: seqnet forward head %d: %w", i, err)
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
func (n *SeqNet) Backward(dHeads []*tensor.Matrix) error {
	if n.h == nil {
		return fmt.Errorf("nn: seqnet backward: Backward before Forward")
	}
	if len(dHeads) != len(n.heads) {
		return fmt.Errorf("nn: seqnet backward: %d head gradients for %d heads", len(dHeads), len(n.heads))
	}
	T, B, H := n.t, n.b, n.cfg.Hidden
	for i, d := range dHeads {
		if err := tensor.CheckShape(fmt.Sprintf("nn: seqnet backward: head %d gradient", i), d, T*B, n.heads[i].size); err != nil {
			return err
		}
	}
	n.dH.Reshape(T*B, H)
	n.dH.Zero()
	var dC *tensor.Matrix
	for i, hd := range n.heads {
		d := dHeads[i]
		// Inactive rows have h = c = 0, so they add nothing to dW; the bias
		// sum skips them explicitly.
		bg := hd.b.Grad.Data
		for t := 0; t < T; t++ {
			for b := 0; b < B; b++ {
				if t < n.lengths[b] {
					for j, v := range d.Row(t*B + b) {
						bg[j] += v
					}
				}
			}
		}
		var err error
		if hd.state {
			if dC == nil {
				dC = n.dC
				dC.Reshape(T*B, H)
				dC.Zero()
			}
			wc, wh := hd.w.Value.RowSlice(0, H), hd.w.Value.RowSlice(H, 2*H)
			err = firstErr(
				n.eng.MatMul(hd.w.Grad.RowSlice(0, H), n.c, true, d, false, 1, 1),
				n.eng.MatMul(hd.w.Grad.RowSlice(H, 2*H), n.h, true, d, false, 1, 1),
				n.eng.MatMul(dC, d, false, wc, true, 1, 1),
				n.eng.MatMul(n.dH, d, false, wh, true, 1, 1))
		} else {
			err = firstErr(
				n.eng.MatMul(hd.w.Grad, n.h, true, d, false, 1, 1),
				n.eng.MatMul(n.dH, d, false, hd.w.Value, true, 1, 1))
		}
		if err != nil {
			return fmt.Errorf("nn: seqnet backward head %d: %w", i, err)
		}
	}
	dx, err := n.lstm.Backward(n.dH, dC)
	if err != nil {
		return fmt.Errorf("nn: seqnet backward: %w", err)
	}
	if err := n.emb.Backward(dx); err != nil {
		return fmt.Errorf("nn: seqnet backward: %w", err)
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

// SeqState is the carried state of B sequences in step mode, with the
// scratch buffers one Step needs, so stepping allocates nothing.
type SeqState struct {
	B     int
	H, C  *tensor.Matrix // B x Hidden
	x     *tensor.Matrix
	gates *tensor.Matrix

	// Projected-input step (see SeqNet.Step): stack holds every embedding
	// row then the embedding bias, proj = stack·Wx with the LSTM bias added
	// to its last row. Both are rebuilt from the parameters on every Step,
	// so they can never be stale.
	stack, proj *tensor.Matrix
	offs        []int32 // first stack row of each feature
}

// NewState returns a zero state for B sequences.
func (n *SeqNet) NewState(B int) *SeqState {
	return &SeqState{
		B: B, H: tensor.New(B, n.cfg.Hidden), C: tensor.New(B, n.cfg.Hidden),
		x: tensor.New(B, n.cfg.EmbedDim), gates: tensor.New(B, 4*n.cfg.Hidden),
	}
}

// Reset zeroes the state of sequence b (a new episode in that slot).
func (s *SeqState) Reset(b int) error {
	if b < 0 || b >= s.B {
		return fmt.Errorf("nn: seqstate reset: index %d outside 0..%d", b, s.B-1)
	}
	clear(s.H.Row(b))
	clear(s.C.Row(b))
	return nil
}

// ResetAll zeroes the state of every sequence.
func (s *SeqState) ResetAll() {
	s.H.Zero()
	s.C.Zero()
}

// Step advances every sequence of st by one step on tokens (B*F values)
// and writes head i into heads[i] (B x HeadSizes[i], caller-owned).
func (n *SeqNet) Step(st *SeqState, tokens []int32, heads []*tensor.Matrix) error {
	if st == nil {
		return fmt.Errorf("nn: seqnet step: nil state")
	}
	if st.H == nil || wrongShape(st.H, st.B, n.cfg.Hidden) {
		return fmt.Errorf("nn: seqnet step: state shape %s, want %dx%d (state from another network?)", st.H.Shape(), st.B, n.cfg.Hidden)
	}
	if F := n.emb.Features(); len(tokens) != st.B*F {
		return fmt.Errorf("nn: seqnet step: %d tokens, want B*F = %d*%d = %d", len(tokens), st.B, F, st.B*F)
	}
	if len(heads) != len(n.heads) {
		return fmt.Errorf("nn: seqnet step: %d head outputs for %d heads", len(heads), len(n.heads))
	}
	for i, hd := range n.heads {
		if heads[i] == nil || wrongShape(heads[i], st.B, hd.size) {
			return fmt.Errorf("nn: seqnet step: head %d output: shape %s, want %dx%d", i, heads[i].Shape(), st.B, hd.size)
		}
	}
	if n.projectedStep(st.B) {
		if err := n.projectInputs(st, tokens); err != nil {
			return fmt.Errorf("nn: seqnet step: %w", err)
		}
		if err := n.lstm.stepFromInput(st.gates, st.H, st.C); err != nil {
			return fmt.Errorf("nn: seqnet step: %w", err)
		}
	} else {
		if err := n.emb.Lookup(st.x, tokens); err != nil {
			return fmt.Errorf("nn: seqnet step: %w", err)
		}
		if err := n.lstm.Step(st.x, st.H, st.C, st.gates); err != nil {
			return fmt.Errorf("nn: seqnet step: %w", err)
		}
	}
	for i, hd := range n.heads {
		if err := n.applyHead(hd, st.H, st.C, heads[i]); err != nil {
			return fmt.Errorf("nn: seqnet step head %d: %w", i, err)
		}
	}
	return nil
}

// projectedStep reports whether a step over B sequences computes the LSTM
// input projection through projected tables. Since
//
//	(bias + Σ_f E_f[tok_f])·Wx + b = (bias·Wx + b) + Σ_f (E_f·Wx)[tok_f],
//
// one (V+1) x E x 4H product (V = Σ vocabularies) and a gather-add of rows
// replace the B x E x 4H product; that pays when V+1 is well below B.
func (n *SeqNet) projectedStep(B int) bool {
	V := 0
	for _, v := range n.emb.Vocabs {
		V += v
	}
	return !n.directStep && 2*(V+1) <= B
}

// projectInputs writes x·Wx + b for the embedding sums x of tokens into
// st.gates via freshly projected tables.
func (n *SeqNet) projectInputs(st *SeqState, tokens []int32) error {
	e, l := n.emb, n.lstm
	V := 0
	for _, v := range e.Vocabs {
		V += v
	}
	if st.stack == nil {
		st.stack, st.proj = tensor.New(V+1, e.Dim), tensor.New(V+1, 4*l.Hidden)
	}
	if wrongShape(st.stack, V+1, e.Dim) || wrongShape(st.proj, V+1, 4*l.Hidden) {
		return fmt.Errorf("projection buffers %s and %s, want %dx%d and %dx%d (state from another network?)",
			st.stack.Shape(), st.proj.Shape(), V+1, e.Dim, V+1, 4*l.Hidden)
	}
	off := 0
	for _, t := range e.Tables {
		copy(st.stack.Data[off*e.Dim:], t.Value.Data)
		off += t.Value.Rows
	}
	copy(st.stack.Row(V), e.Bias.Value.Data)
	if err := n.eng.MatMul(st.proj, st.stack, false, l.Wx.Value, false, 1, 0); err != nil {
		return err
	}
	biasRow := st.proj.Row(V)
	for j, v := range l.B.Value.Data {
		biasRow[j] += v
	}
	F := len(e.Vocabs)
	for r := 0; r < st.B; r++ {
		for f, tok := range tokens[r*F : (r+1)*F] {
			if tok < 0 || int(tok) >= e.Vocabs[f] {
				return fmt.Errorf("embedding %s: row %d feature %d: token %d outside vocabulary [0,%d)",
					e.Bias.Name, r, f, tok, e.Vocabs[f])
			}
		}
	}
	if len(st.offs) != F {
		st.offs = make([]int32, F)
		off := 0
		for f, v := range e.Vocabs {
			st.offs[f] = int32(off)
			off += v
		}
	}
	gatherRows(st.gates, st.proj, biasRow, tokens, st.offs, n.pureGo)
	return nil
}

// gatherRows sets out[r] = bias + Σ_f proj[offs[f] + tokens[r*F+f]] on
// validated tokens.
func gatherRows(out, proj *tensor.Matrix, bias []float32, tokens, offs []int32, pureGo bool) {
	F, W := len(offs), out.Cols
	if haveCellKernel && !pureGo {
		gatherKernel(out.Data, proj.Data, bias, tokens, offs, out.Rows, F, W)
		return
	}
	for r := 0; r < out.Rows; r++ {
		row := out.Row(r)
		copy(row, bias)
		for f, tok := range tokens[r*F : (r+1)*F] {
			src := proj.Row(int(offs[f] + tok))
			_ = src[len(row)-1]
			for j := range row {
				row[j] += src[j]
			}
		}
	}
}
