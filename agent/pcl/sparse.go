package pcl

import (
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/policy"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Sparse is sparse PCL (paper section 6 and appendix): the sparse Tsallis entropy (q = 2) with
// weight alpha (Heads.Alpha), a sparsemax policy, and the per-step term
//
//	alpha/2 - alpha*mu(a|s) + lambda(a|s) - Lambda(s),
//
// with mu = relu(z_a - G(z)), lambda = relu(G(z) - z_a) * exp(head) read from the first
// multiplier head and Lambda = -(alpha/2) * sigmoid(head) from the second.
type Sparse struct{}

// Name is "sparse".
func (Sparse) Name() config.Algo { return config.AlgoSparse }

// Q is 2: the sparsemax.
func (Sparse) Q() float64 { return 2 }

func (Sparse) multiplierHeads() int { return 2 }

func (Sparse) densePolicy() bool { return false }

func (Sparse) stepTerm(m *Heads, heads, dHeads []*tensor.Matrix, row, a int, z, p, dz []float32, tau, w float64) float64 {
	clear(dz)
	r := policy.SparseStep(dz, policy.SparseRow[float32]{Z: z, P: p, Tau: tau}, a, m.Alpha,
		head(heads, m.LambdaHead, row), head(heads, m.BigHead, row), w)
	if w != 0 {
		dHeads[m.LambdaHead].Data[row] += float32(w * r.DHeadLambda)
		dHeads[m.BigHead].Data[row] += float32(w * r.DHeadBig)
		m.addLogitGrad(dHeads[0].Row(row), dz)
	}
	return r.Value
}

// fastValue finds the row's support and threshold without writing the policy out and keeps the
// support in the worker's list; V is the V head, or alpha * spmax(Q/alpha) in the unified form.
func (Sparse) fastValue(o *Objective, wk *rowWork, w int, heads []*tensor.Matrix, row, a int, scale float32) bool {
	m, in := o.Heads, &o.in
	h := heads[0].Row(row)
	mx, ts, sup, ok := policy.SparsemaxSupport(h, scale, wk.scratch, wk.idx)
	if !ok {
		return false
	}
	o.fast.rows[row] = rowState{m: mx, ts: ts, wk: int32(w), off: int32(len(wk.sup)), n: int32(len(sup))}
	wk.sup = append(wk.sup, sup...)
	if m.VHead >= 0 {
		in.Values[row] = float64(heads[m.VHead].Data[row])
	} else {
		// alpha * spmax(z) = alpha * (m + sum p (z - m) + (1 - sum p^2)/2).
		var sp, sq float64
		for _, i := range sup {
			y := float64(h[i]*scale) - mx
			p := float64(float32(relu(y - ts)))
			sp += p * y
			sq += p * p
		}
		in.Values[row] = m.Alpha * (mx + sp + (1-sq)/2)
	}
	if a >= 0 {
		za := float64(h[a] * scale)
		r, _, _ := policy.SparseStepOnSupport(za, ts+mx, onSupport(za, mx, ts), len(sup), m.Alpha,
			head(heads, m.LambdaHead, row), head(heads, m.BigHead, row), 0)
		in.Terms[row] = r.Value
	}
	return true
}

// fastGrad writes head 0's gradient only on the support and the taken action: into d, or as
// sparse rows into sink (whose offsets sparseOffsets set: the support, then the taken action when
// it is off the support). In the unified form V = alpha * spmax(h/alpha) adds p on the support,
// so both forms' gradients are sparse. Each entry is computed with the same float32 operations
// in both outputs, so a sparse row written out densely is the dense row.
func (Sparse) fastGrad(o *Objective, wk *rowWork, heads, dHeads []*tensor.Matrix, sink *nn.SparseRows, row, a int, wt, dv float64, d []float32, scale float32) {
	m, fs := o.Heads, &o.fast
	st := fs.rows[row]
	h := heads[0].Row(row)
	sup := fs.work[st.wk].sup[st.off : st.off+st.n]
	var idx []int32
	var val []float32
	if sink != nil {
		e := fs.nnz[row]
		idx, val = sink.Index[e:fs.nnz[row+1]], sink.Values[e:fs.nnz[row+1]]
		copy(idx, sup) // a row without entries (no weight on it) copies nothing
		clear(val)
	} else {
		clear(d)
	}
	if m.VHead >= 0 && dv != 0 {
		dHeads[m.VHead].Data[row] += float32(dv)
	}
	if wt != 0 {
		za := float64(h[a] * scale)
		onS := onSupport(za, st.m, st.ts)
		r, shared, atA := policy.SparseStepOnSupport(za, st.ts+st.m, onS, len(sup), m.Alpha,
			head(heads, m.LambdaHead, row), head(heads, m.BigHead, row), wt)
		dHeads[m.LambdaHead].Data[row] += float32(wt * r.DHeadLambda)
		dHeads[m.BigHead].Data[row] += float32(wt * r.DHeadBig)
		sv, av := scale*float32(shared), scale*float32(atA)
		if sink != nil {
			for j, i := range sup {
				val[j] = sv
				if int(i) == a {
					val[j] += av
				}
			}
			if !onS && len(idx) > len(sup) {
				idx[len(sup)], val[len(sup)] = int32(a), av
			}
		} else {
			for _, i := range sup {
				d[i] += sv
			}
			d[a] += av
		}
	}
	if m.VHead < 0 && dv != 0 {
		for j, i := range sup {
			g := float32(dv * float64(float32(relu((float64(h[i]*scale)-st.m)-st.ts))))
			if sink != nil {
				val[j] += g
			} else {
				d[i] += g
			}
		}
	}
}

// sparseOffsets sizes sink for the gradient rows of the last first pass: each row (of Tn*B) holds
// the support when the step term has a weight or, in the unified form, the value does (j's weights
// gives both), and the taken action when it is off the support and the step term has a weight.
func sparseOffsets(o *Objective, heads []*tensor.Matrix, s Steps, sink *nn.SparseRows, j *gradJob, scale float32) {
	fs := &o.fast
	B, K := s.B, o.Heads.NumActions()
	unified := o.Heads.VHead < 0
	rows := (s.T + 1) * B
	sink.Reset(K)
	fs.nnz = grow(fs.nnz, rows+1)
	fs.nnz[0] = 0
	for row := range rows {
		n := 0
		if t, b := row/B, row%B; t <= s.Lengths[b] {
			w, dv := j.weights(row)
			if w != 0 || (unified && dv != 0) {
				st := fs.rows[row]
				n = int(st.n)
				if w != 0 && !onSupport(float64(heads[0].Data[row*K+int(s.Actions[row])]*scale), st.m, st.ts) {
					n++ // a bootstrap row (no action) has no step term: w is 0 there
				}
			}
		}
		fs.nnz[row+1] = fs.nnz[row] + n
	}
	total := fs.nnz[rows]
	sink.Rows = rows
	sink.Offsets = append(sink.Offsets[:0], fs.nnz[:rows+1]...)
	sink.Index = growRoom(sink.Index, total)
	sink.Values = growRoom(sink.Values, total)
}

// sampleRow samples over the support only: it is ascending and holds every positive probability,
// so sampling over it is sampling over the whole row.
func (Sparse) sampleRow(sc *RowScratch, h []float32, scale float32, u float64) (int, float32, float32, bool) {
	K := len(h)
	sc.scratch, sc.idx = grow(sc.scratch, K), grow(sc.idx, K)
	mx, ts, sup, ok := policy.SparsemaxSupport(h, scale, sc.scratch, sc.idx)
	if !ok {
		return 0, 0, 0, false
	}
	sc.pv = grow(sc.pv, len(sup))
	for j, a := range sup {
		sc.pv[j] = float32(max((float64(h[a]*scale)-mx)-ts, 0))
	}
	j := policy.SampleWithUniform(sc.pv, u)
	action := -1
	if j >= 0 {
		action = int(sup[j])
	}
	mp, n := RowStats(sc.pv)
	return action, mp, n, true
}

// onSupport reports p_a > 0 for the logit za of a sparsemax row of maximum m and shifted
// threshold ts, exactly as SparsemaxSupport decides it.
func onSupport(za, m, ts float64) bool { return float32(relu((za-m)-ts)) > 0 }

func relu(x float64) float64 {
	if x < 0 {
		return 0
	}
	return x
}
