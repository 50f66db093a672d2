package pcl

import (
	"fmt"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/policy"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// The fast path of Evaluate. It computes what evaluateReference computes, up to float rounding,
// in two passes over the rows, each split over Workers goroutines by blocks of rows:
//
//   - the first pass finds each row's policy statistics (soft: max and log-sum-exp; sparse: the
//     threshold and the support) with the float32 row kernels of package policy, and from them
//     V and the step term; the policy itself is never written out;
//   - after PathLoss, the second pass writes each row's gradient: soft's dense dz in one pass of
//     exps, sparse's only on the support and the taken action (as sparse rows when
//     Heads.SparseGrad is set).
//
// Tsallis PCL (any other entropic index) keeps the reference's per-row functions, run in
// parallel. Every row is computed the same way whatever goroutine runs it, and nothing is summed
// across rows here, so the result does not depend on the number of workers.

// rowBlock is the number of rows a worker takes at a time.
const rowBlock = 16

// rowState is what the first pass keeps of a row for the second.
type rowState struct {
	// soft: m the row maximum, inv 1/sum exp(z - m), lse the log-sum-exp.
	// sparse: m the row maximum, ts the shifted threshold (G = ts + m), support in
	// work[wk].sup[off:off+n].
	m, ts  float64
	inv    float32
	wk     int32
	off, n int32
}

// rowWork is one worker's scratch.
type rowWork struct {
	scratch, dz []float32
	idx, sup    []int32
	bad         bool
}

type fastState struct {
	rows []rowState
	work []rowWork
	// counts and offsets of the sparse rows written to Heads.SparseGrad.
	nnz []int
	// last head 0 of the fast path, for Objective.Probs.
	head0 *tensor.Matrix
	probs []float32
}

func (o *Objective) evaluateFast(heads []*tensor.Matrix, s Steps, dHeads []*tensor.Matrix) (float64, error) {
	m := o.Heads
	T, B, K := s.T, s.B, m.NumActions()
	Tn := T + 1
	for b := range B {
		L := s.Lengths[b]
		if L < 1 || L > T {
			return 0, fmt.Errorf("pcl: sequence %d has length %d, want 1..%d", b, L, T)
		}
		for t := range L {
			if a := int(s.Actions[t*B+b]); a < 0 || a >= K {
				return 0, fmt.Errorf("pcl: sequence %d: action %d at step %d outside [0, %d)", b, a, t, K)
			}
		}
	}
	fs := &o.fast
	fs.head0 = nil
	workers := tensor.Workers(o.Workers)
	fs.rows = grow(fs.rows, Tn*B)
	if len(fs.work) < workers {
		fs.work = append(fs.work, make([]rowWork, workers-len(fs.work))...)
	}
	for w := range fs.work[:workers] {
		wk := &fs.work[w]
		wk.scratch, wk.idx, wk.dz = grow(wk.scratch, K), grow(wk.idx, K), grow(wk.dz, K)
		wk.sup, wk.bad = wk.sup[:0], false
	}
	generic := m.Algo != config.AlgoSoft && m.Algo != config.AlgoSparse
	if generic {
		o.z = grow(o.z, Tn*B*K)
		o.p = grow(o.p, Tn*B*K)
		o.tau = grow(o.tau, Tn*B)
	}
	in := &o.in
	*in = PathInputs{T: T, B: B, Lengths: grow(in.Lengths, B), Terminated: grow(in.Terminated, B),
		Values: grow(in.Values, Tn*B), Rewards: grow(in.Rewards, T*B), Terms: grow(in.Terms, T*B)}
	clear(in.Values)
	clear(in.Rewards)
	clear(in.Terms)
	for b := range B {
		in.Lengths[b], in.Terminated[b] = s.Lengths[b], s.Terminated[b]
		for t := range s.Lengths[b] {
			in.Rewards[t*B+b] = s.Rewards[t*B+b]
		}
	}
	scale := float32(1)
	if m.Form == config.FormUnified {
		scale = float32(1 / m.Alpha)
	}
	tensor.ParallelRows(Tn*B, rowBlock, workers, func(w, lo, hi int) {
		wk := &fs.work[w]
		for row := lo; row < hi; row++ {
			t, b := row/B, row%B
			L := s.Lengths[b]
			if t > L {
				continue
			}
			a := -1
			if t < L {
				a = int(s.Actions[row])
			}
			h := heads[0].Row(row)
			switch {
			case generic:
				z, p := o.z[row*K:(row+1)*K], o.p[row*K:(row+1)*K]
				o.tau[row] = m.Probs(p, z, h)
				in.Values[row] = m.rowValue(heads, row, z, p)
				if a >= 0 {
					in.Terms[row] = m.stepTerm(heads, nil, row, a, z, p, wk.dz, o.tau[row], 0)
				}
			case m.Algo == config.AlgoSoft:
				r, ok := policy.SoftRowStats(h, scale)
				if !ok {
					wk.bad = true
					continue
				}
				fs.rows[row] = rowState{m: float64(r.M), ts: r.LSE, inv: r.Inv}
				if m.VHead >= 0 {
					in.Values[row] = float64(heads[m.VHead].Data[row])
				} else {
					in.Values[row] = m.Alpha * r.LSE
				}
				if a >= 0 {
					in.Terms[row] = -m.Alpha * (float64(h[a]*scale) - r.LSE)
				}
			default:
				mx, ts, sup, ok := policy.SparsemaxSupport(h, scale, wk.scratch, wk.idx)
				if !ok {
					wk.bad = true
					continue
				}
				fs.rows[row] = rowState{m: mx, ts: ts, wk: int32(w), off: int32(len(wk.sup)), n: int32(len(sup))}
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
			}
		}
	})
	for _, wk := range fs.work[:workers] {
		if wk.bad {
			// A NaN or infinite output: the reference defines what the loss and gradient are.
			return o.evaluateReference(heads, s, dHeads)
		}
	}
	var g *PathGrads
	if dHeads != nil {
		g = &o.grads
	}
	loss, err := PathLoss(*in, o.Cfg.Gamma, o.Cfg.Rollout, g)
	if !generic {
		fs.head0 = heads[0]
	}
	if err != nil || dHeads == nil {
		return loss, err
	}
	if len(dHeads) != len(heads) {
		return loss, fmt.Errorf("pcl: %d head gradients for %d heads", len(dHeads), len(heads))
	}
	sink := m.SparseGrad
	if m.Algo != config.AlgoSparse || m.Form != config.FormSeparate {
		sink = nil
	}
	for i, h := range heads {
		if i == 0 && sink != nil {
			dHeads[0].Reshape(0, h.Cols)
			continue
		}
		dHeads[i].Reshape(h.Rows, h.Cols)
		if i != 0 {
			dHeads[i].Zero()
		}
	}
	ps, cw := o.PolicyScale(), o.Cfg.CriticWeight
	// weights returns the step weight (0 at a bootstrap row) and the value weight of a row.
	weights := func(row int) (w, dv float64) {
		t, b := row/B, row%B
		if t < s.Lengths[b] {
			w = g.DTerms[row] * ps
		}
		return w, g.DValues[row] * cw
	}
	if sink != nil {
		// Offsets of each row's entries: the support and the taken action, when the step term
		// has a weight.
		sink.Reset(K)
		fs.nnz = grow(fs.nnz, Tn*B+1)
		fs.nnz[0] = 0
		for row := range Tn * B {
			n := 0
			if t, b := row/B, row%B; t <= s.Lengths[b] {
				if w, _ := weights(row); w != 0 {
					st := fs.rows[row]
					n = int(st.n)
					if a := int(s.Actions[row]); !onSupport(float64(heads[0].Data[row*K+a]*scale), st.m, st.ts) {
						n++
					}
				}
			}
			fs.nnz[row+1] = fs.nnz[row] + n
		}
		total := fs.nnz[Tn*B]
		sink.Rows = Tn * B
		sink.Offsets = append(sink.Offsets[:0], fs.nnz[:Tn*B+1]...)
		sink.Index = grow(sink.Index, total)
		sink.Values = grow(sink.Values, total)
	}
	tensor.ParallelRows(Tn*B, rowBlock, workers, func(w, lo, hi int) {
		wk := &fs.work[w]
		for row := lo; row < hi; row++ {
			t, b := row/B, row%B
			L := s.Lengths[b]
			var d []float32
			if sink == nil {
				d = dHeads[0].Row(row)
			}
			if t > L {
				clear(d)
				continue
			}
			wt, dv := weights(row)
			h := heads[0].Row(row)
			switch {
			case generic:
				clear(d)
				z, p := o.z[row*K:(row+1)*K], o.p[row*K:(row+1)*K]
				if wt != 0 {
					m.stepTerm(heads, dHeads, row, int(s.Actions[row]), z, p, wk.dz, o.tau[row], wt)
				}
				if dv != 0 {
					m.addValueGrad(dHeads, row, p, dv)
				}
			case m.Algo == config.AlgoSoft:
				st := fs.rows[row]
				// d = s * w * alpha * (p - onehot(a)) (+ dv * p in the unified form).
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
				if c1 == 0 {
					clear(d)
				} else {
					policy.SoftRowExp(d, h, scale, policy.SoftRow{M: float32(st.m), Inv: st.inv}, float32(c1))
				}
				if c2 != 0 {
					d[s.Actions[row]] += float32(c2)
				}
			default:
				st := fs.rows[row]
				sup := fs.work[st.wk].sup[st.off : st.off+st.n]
				if sink == nil {
					clear(d)
				}
				if m.VHead >= 0 && dv != 0 {
					dHeads[m.VHead].Data[row] += float32(dv)
				}
				if wt != 0 {
					a := int(s.Actions[row])
					za := float64(h[a] * scale)
					onS := onSupport(za, st.m, st.ts)
					r, shared, atA := policy.SparseStepOnSupport(za, st.ts+st.m, onS, len(sup), m.Alpha,
						head(heads, m.LambdaHead, row), head(heads, m.BigHead, row), wt)
					dHeads[m.LambdaHead].Data[row] += float32(wt * r.DHeadLambda)
					dHeads[m.BigHead].Data[row] += float32(wt * r.DHeadBig)
					sv, av := float32(shared), float32(atA)
					if sink != nil {
						e := fs.nnz[row]
						idx, val := sink.Index[e:fs.nnz[row+1]], sink.Values[e:fs.nnz[row+1]]
						for j, i := range sup {
							idx[j], val[j] = i, sv
							if int(i) == a {
								val[j] += av
							}
						}
						if !onS && len(idx) > len(sup) {
							idx[len(sup)], val[len(sup)] = int32(a), av
						}
					} else {
						for _, i := range sup {
							d[i] += scale * sv
						}
						d[a] += scale * av
					}
				}
				if m.VHead < 0 && dv != 0 {
					for _, i := range sup {
						p := float32(relu((float64(h[i]*scale) - st.m) - st.ts))
						d[i] += float32(dv * float64(p))
					}
				}
			}
		}
	})
	return loss, nil
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
