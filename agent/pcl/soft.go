package pcl

import (
	"math"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/policy"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Soft is soft PCL (paper section 4): the Shannon-entropy regulariser with weight tau (Heads.Alpha),
// a softmax policy, and the per-step term -tau * log pi(a|s). It reads no multiplier heads.
type Soft struct{}

// Name is "soft".
func (Soft) Name() config.Algo { return config.AlgoSoft }

// Q is 1: the softmax.
func (Soft) Q() float64 { return 1 }

func (Soft) multiplierHeads() int { return 0 }

func (Soft) densePolicy() bool { return false }

// stepTerm is -tau * log pi(a) = -tau * (z_a - logsumexp(z)); tau is the log-sum-exp. Its
// gradient with respect to z is tau * (p - onehot(a)).
func (Soft) stepTerm(m *Heads, heads, dHeads []*tensor.Matrix, row, a int, z, p, dz []float32, tau, w float64) float64 {
	clear(dz)
	logp := float64(z[a]) - tau
	c := -m.Alpha * logp
	if w != 0 {
		for b := range p {
			g := float64(p[b])
			if b == a {
				g -= 1
			}
			dz[b] = float32(w * m.Alpha * g)
		}
		m.addLogitGrad(dHeads[0].Row(row), dz)
	}
	return c
}

// fastValue keeps the row's maximum and log-sum-exp; V is the V head, or tau * logsumexp(Q/tau)
// in the unified form. When the gradient is wanted, the exponentials of the log-sum-exp are left
// in the gradient's row, where fastGrad scales them into the softmax.
func (Soft) fastValue(o *Objective, wk *rowWork, w int, heads []*tensor.Matrix, row, a int, scale float32) bool {
	m, in := o.Heads, &o.in
	h := heads[0].Row(row)
	var r policy.SoftRow
	var ok bool
	switch rr := m.Range; {
	case o.fast.exps != nil && rr != nil && rr.Valid && len(rr.Max) == heads[0].Rows:
		r, ok = policy.SoftRowStatsExpRange(h, scale, rr.Max[row], rr.Min[row], rr.Finite(row), o.fast.exps.Row(row), m.Exp)
	case o.fast.exps != nil:
		r, ok = policy.SoftRowStatsExp(h, scale, o.fast.exps.Row(row), m.Exp)
	default:
		r, ok = policy.SoftRowStats(h, scale)
	}
	if !ok {
		return false
	}
	o.fast.rows[row] = rowState{m: float64(r.M), ts: r.LSE, inv: r.Inv}
	if m.VHead >= 0 {
		in.Values[row] = float64(heads[m.VHead].Data[row])
	} else {
		in.Values[row] = m.Alpha * r.LSE
	}
	if a >= 0 {
		in.Terms[row] = -m.Alpha * (float64(h[a]*scale) - r.LSE)
	}
	return true
}

// fastGrad writes d = s * w * tau * (p - onehot(a)) (+ dv * p in the unified form) in one pass:
// over the exponentials fastValue left in d, or of exps. With a row-scaled sink it leaves the
// exponentials in d and writes only the row's factor and the taken action's entry.
func (Soft) fastGrad(o *Objective, wk *rowWork, heads, dHeads []*tensor.Matrix, sink *nn.SparseRows, row, a int, wt, dv float64, d []float32, scale float32) {
	m := o.Heads
	st := o.fast.rows[row]
	h := heads[0].Row(row)
	c1, c2 := 0.0, 0.0
	if wt != 0 {
		c1 = float64(scale) * wt * m.Alpha
		c2 = -c1
	}
	if m.VHead >= 0 {
		if dv != 0 {
			dHeads[m.VHead].Data[row] += float32(dv)
		}
	} else {
		c1 += dv
	}
	r := policy.SoftRow{M: float32(st.m), Inv: st.inv}
	if sc := o.fast.scaled; sc != nil {
		if f, shift, ok := rowFactor(c1, st.inv, c2); ok {
			if shift != 0 {
				d[a] += shift
			}
			sc.Scale[row] = f
			return
		}
		sc.Scale[row] = 1 // written out below
	}
	switch {
	case c1 == 0:
		clear(d)
	case o.fast.exps != nil:
		policy.SoftRowScale(d, r, float32(c1))
	default:
		policy.SoftRowExp(d, h, scale, r, float32(c1))
	}
	if c2 != 0 {
		d[a] += float32(c2)
	}
}

// rowFactor returns the factor f and the shift of the taken action's exponential that make the
// row-scaled gradient f·(e + shift·onehot(a)) equal c1·softmax + c2·onehot(a), for exponentials e
// whose sum is 1/inv: f = c1·inv, shift = c2/f. ok is false where no factor does (f is 0 while c2
// is not, or c2/f overflows: the unified form's dV cancelling c1); the row is then written out.
func rowFactor(c1 float64, inv float32, c2 float64) (f, shift float32, ok bool) {
	f = float32(c1 * float64(inv))
	if c2 == 0 {
		return f, 0, true
	}
	shift = float32(c2) / f
	if f == 0 || math.IsInf(float64(shift), 0) || math.IsNaN(float64(shift)) {
		return 0, 0, false
	}
	return f, shift, true
}

// sampleRow writes the softmax out and inverts its cumulative distribution.
func (Soft) sampleRow(sc *RowScratch, h []float32, scale float32, u float64) (int, float32, float32, bool) {
	sc.pv = grow(sc.pv, len(h))
	r, ok := policy.SoftRowStats(h, scale)
	if !ok {
		return 0, 0, 0, false
	}
	policy.SoftRowExp(sc.pv, h, scale, r, 1)
	mp, sup := policy.MaxAndSupport(sc.pv) // RowStats in one vectorised pass (the row is finite)
	return policy.SampleWithUniform(sc.pv, u), mp, float32(sup), true
}
