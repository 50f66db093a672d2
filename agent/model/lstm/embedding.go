package lstm

import (
	"fmt"
	"math/rand/v2"

	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// embeddingSum maps F categorical features per row to
// bias + Σ_f Table_f[token_f]: the sum of one-hot·W products of the
// reference network without forming the one-hots. Feature f has its own
// vocabulary of Vocabs[f] tokens (e.g. the observation, base+1, and each
// previous-action component, size+1 with the last index meaning "none").
type embeddingSum struct {
	Vocabs []int
	Dim    int
	Tables []*nn.Param // Tables[f] is Vocabs[f] x Dim
	Bias   *nn.Param   // 1 x Dim

	tokens []int32 // copy of the last Forward's tokens
	out    *tensor.Matrix
}

// newEmbeddingSum returns tables drawn from a truncated normal with std
// (the reference uses 0.01) and a zero bias.
func newEmbeddingSum(name string, vocabs []int, dim int, std float64, rng *rand.Rand) (*embeddingSum, error) {
	if len(vocabs) == 0 {
		return nil, fmt.Errorf("lstm: embedding %q: no features", name)
	}
	if dim <= 0 {
		return nil, fmt.Errorf("lstm: embedding %q: dim must be positive, got %d", name, dim)
	}
	e := &embeddingSum{Vocabs: append([]int(nil), vocabs...), Dim: dim, Bias: nn.NewParam(name+".bias", 1, dim), out: tensor.New(0, dim)}
	for f, v := range vocabs {
		if v <= 0 {
			return nil, fmt.Errorf("lstm: embedding %q: feature %d has vocabulary size %d, want > 0", name, f, v)
		}
		p := nn.NewParam(fmt.Sprintf("%s.table%d", name, f), v, dim)
		nn.TruncatedNormal(p.Value, std, rng)
		e.Tables = append(e.Tables, p)
	}
	return e, nil
}

// Params returns the tables then the bias.
func (e *embeddingSum) Params() []*nn.Param {
	return append(append([]*nn.Param(nil), e.Tables...), e.Bias)
}

// Features is F, the number of tokens per row.
func (e *embeddingSum) Features() int { return len(e.Vocabs) }

// Lookup writes the embedding sums of tokens (rows x F, row-major) into
// out (rows x Dim) without caching anything.
func (e *embeddingSum) Lookup(out *tensor.Matrix, tokens []int32) error {
	F := len(e.Vocabs)
	if out == nil || out.Cols != e.Dim || len(tokens) != out.Rows*F {
		return fmt.Errorf("lstm: embedding %s: %d tokens for output %s, want rows*%d tokens and %d columns",
			e.Bias.Name, len(tokens), out.Shape(), F, e.Dim)
	}
	for r := 0; r < out.Rows; r++ {
		row := out.Row(r)
		copy(row, e.Bias.Value.Data)
		for f, tok := range tokens[r*F : (r+1)*F] {
			if tok < 0 || int(tok) >= e.Vocabs[f] {
				return fmt.Errorf("lstm: embedding %s: row %d feature %d: token %d outside vocabulary [0,%d)",
					e.Bias.Name, r, f, tok, e.Vocabs[f])
			}
			emb := e.Tables[f].Value.Row(int(tok))
			for j, v := range emb {
				row[j] += v
			}
		}
	}
	return nil
}

// Forward returns the rows x Dim embedding sums (owned by e) and caches the tokens.
func (e *embeddingSum) Forward(tokens []int32, rows int) (*tensor.Matrix, error) {
	e.out.Reshape(rows, e.Dim)
	if err := e.Lookup(e.out, tokens); err != nil {
		return nil, err
	}
	e.tokens = append(e.tokens[:0], tokens...)
	return e.out, nil
}

// Backward scatters dOut into the table rows used by the last Forward and
// accumulates the bias gradient.
func (e *embeddingSum) Backward(dOut *tensor.Matrix) error {
	F := len(e.Vocabs)
	if err := tensor.CheckShape(dOut, len(e.tokens)/F, e.Dim, "lstm: embedding", e.Bias.Name, "dOut"); err != nil {
		return err
	}
	nn.AddColumnSums(e.Bias.Grad.Data, dOut)
	for r := 0; r < dOut.Rows; r++ {
		d := dOut.Row(r)
		for f, tok := range e.tokens[r*F : (r+1)*F] {
			g := e.Tables[f].Grad.Row(int(tok))
			for j, v := range d {
				g[j] += v
			}
		}
	}
	return nil
}
