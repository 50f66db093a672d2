package pcl

import (
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/policy"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Tsallis is general Tsallis-q PCL: the Tsallis entropy of index q = EntropicIndex (> 1) with
// weight alpha (Heads.Alpha), an alpha-entmax policy, and the per-step term of
// policy.TsallisStep, whose multiplier lambda reads one log-scale head. q = 2 is the sparse
// case without Sparse's Lambda head; q -> 1 tends to soft PCL.
type Tsallis struct {
	EntropicIndex float64
}

// Name is "tsallis".
func (Tsallis) Name() config.Algo { return config.AlgoTsallis }

// Q is the entropic index.
func (t Tsallis) Q() float64 { return t.EntropicIndex }

func (Tsallis) multiplierHeads() int { return 1 }

// densePolicy: there is no row kernel for a general entmax; the fast path runs the reference's
// per-row functions in parallel.
func (Tsallis) densePolicy() bool { return true }

func (t Tsallis) stepTerm(m *Heads, heads, dHeads []*tensor.Matrix, row, a int, z, p, dz []float32, tau, w float64) float64 {
	clear(dz)
	r := policy.TsallisStep(dz, policy.SparseRow[float32]{Z: z, P: p, Tau: tau}, a, t.EntropicIndex, m.Alpha, head(heads, m.LambdaHead, row), w)
	if w != 0 {
		dHeads[m.LambdaHead].Data[row] += float32(w * r.DLogScale)
		m.addLogitGrad(dHeads[0].Row(row), dz)
	}
	return r.Value
}

func (t Tsallis) fastValue(o *Objective, wk *rowWork, w int, heads []*tensor.Matrix, row, a int, scale float32) bool {
	m, in := o.Heads, &o.in
	K := m.NumActions()
	z, p := o.z[row*K:(row+1)*K], o.p[row*K:(row+1)*K]
	o.tau[row] = m.Probs(p, z, heads[0].Row(row))
	in.Values[row] = m.rowValue(heads, row, z, p)
	if a >= 0 {
		in.Terms[row] = t.stepTerm(m, heads, nil, row, a, z, p, wk.dz, o.tau[row], 0)
	}
	return true
}

func (t Tsallis) fastGrad(o *Objective, wk *rowWork, heads, dHeads []*tensor.Matrix, sink *nn.SparseRows, row, a int, wt, dv float64, d []float32, scale float32) {
	m := o.Heads
	K := m.NumActions()
	clear(d)
	z, p := o.z[row*K:(row+1)*K], o.p[row*K:(row+1)*K]
	if wt != 0 {
		t.stepTerm(m, heads, dHeads, row, a, z, p, wk.dz, o.tau[row], wt)
	}
	if dv != 0 {
		m.addValueGrad(dHeads, row, p, dv)
	}
}

// sampleRow has no row kernel: the caller takes the reference path.
func (Tsallis) sampleRow(*RowScratch, []float32, float32, float64) (int, float32, float32, bool) {
	return 0, 0, 0, false
}
