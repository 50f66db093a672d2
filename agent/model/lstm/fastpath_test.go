package lstm

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// requireCellKernel skips when the C kernels are not built in, failing
// under CI=true where cgo must be available.
func requireCellKernel(t *testing.T) {
	t.Helper()
	if !haveCellKernel {
		if os.Getenv("CI") == "true" {
			t.Fatal("C cell kernels required under CI=true (build with cgo on amd64)")
		}
		t.Skip("C cell kernels not built in (no cgo or not amd64)")
	}
}

// TestStepPathsMatchForwardAfterUpdates: every Step path (projected input
// tables or embedding lookup, C kernels or Go) equals Forward, also after
// the parameters change under a state created before the change, so the
// projected tables cannot be stale.
func TestStepPathsMatchForwardAfterUpdates(t *testing.T) {
	engines := map[string]*tensor.Engine{"gonum": tensor.GonumEngine(), "default": defaultEngine(t)}
	for name, eng := range engines {
		for _, direct := range []bool{false, true} {
			for _, pureGo := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/direct=%v/pureGo=%v", name, direct, pureGo), func(t *testing.T) {
					if !pureGo {
						requireCellKernel(t)
					}
					// B*H = 80*128 cells is above parallelMinCells, so the pool runs too.
					const T, B, F, H = 5, 80, 4, 128
					n, err := NewNet(NetConfig{InputVocabs: []int{6, 3, 3, 6}, Hidden: H, HeadSizes: []int{20, 1},
						StateHeads: []bool{false, true}, Seed: 3, EmbedStd: 0.3, Engine: eng})
					if err != nil {
						t.Fatal(err)
					}
					n.directStep = direct
					n.setPureGo(pureGo)
					if got := n.projectedStep(B); got == direct {
						t.Fatalf("projectedStep(%d) = %v with directStep %v", B, got, direct)
					}
					rng := nn.NewRand(1, 1)
					lengths := make([]int, B)
					for b := range lengths {
						lengths[b] = 1 + rng.IntN(T)
					}
					tokens := make([]int32, T*B*F)
					for i := range tokens {
						tokens[i] = int32(rng.IntN(n.cfg.InputVocabs[i%F]))
					}
					st := n.NewState(B)
					heads := []*tensor.Matrix{tensor.New(B, 20), tensor.New(B, 1)}
					for update := 0; update < 3; update++ {
						if update > 0 {
							// A parameter update, as an optimiser step would make.
							for _, p := range n.Params() {
								for i := range p.Value.Data {
									p.Value.Data[i] += float32(rng.NormFloat64() * 0.05)
								}
							}
						}
						outs, err := n.Forward(tokens, T, B, lengths)
						if err != nil {
							t.Fatal(err)
						}
						st.ResetAll()
						maxDiff := stepForwardMaxDiff(t, n, st, tokens, T, B, F, lengths, heads, outs)
						// Projected tables sum the same terms in another order.
						if maxDiff > 2e-5 {
							t.Fatalf("update %d: step and forward differ by %g", update, maxDiff)
						}
					}
				})
			}
		}
	}
}

// TestProjectedStepRejectsBadTokens: the projected path validates tokens
// like the lookup path.
func TestProjectedStepRejectsBadTokens(t *testing.T) {
	n, err := NewNet(NetConfig{InputVocabs: []int{2, 3}, Hidden: 8, HeadSizes: []int{3}, Seed: 1, Engine: tensor.GonumEngine()})
	if err != nil {
		t.Fatal(err)
	}
	const B = 20
	if !n.projectedStep(B) {
		t.Fatal("expected the projected path at B=20")
	}
	tokens := make([]int32, 2*B)
	tokens[2*7+1] = 3
	err = n.Step(n.NewState(B), tokens, []*tensor.Matrix{tensor.New(B, 3)})
	if err == nil || !strings.Contains(err.Error(), "row 7 feature 1: token 3") {
		t.Fatalf("got %v", err)
	}
}

// TestCellKernelsMatchGo compares the C kernels and the worker pool with
// the Go cell functions run serially, forward and backward, with masked
// rows, with and without the optional tanh(c) and external dc inputs, and
// with the input rows gathered (forward) and scattered (backward) in the
// cell loop.
func TestCellKernelsMatchGo(t *testing.T) {
	requireCellKernel(t)
	const B, H = 70, 128 // B*H above parallelMinCells
	rng := nn.NewRand(9, 9)
	randSlice := func(n int, scale float64) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(rng.NormFloat64() * scale)
		}
		return s
	}
	lengths := make([]int, B)
	for b := range lengths {
		lengths[b] = rng.IntN(3) // t = 1: rows with length 0 or 1 are inactive
	}
	pool := newCellPool()
	// Projected input tables: F = 3 features over V = 9 rows plus the bias row.
	const F = 3
	vocabs := []int32{4, 2, 3}
	in := &inputRows{proj: randSlice(10*4*H, 1), offs: []int32{0, 4, 6}}
	in.bias = in.proj[9*4*H:]
	in.tokens = make([]int32, B*F)
	for i := range in.tokens {
		in.tokens[i] = int32(rng.IntN(int(vocabs[i%F])))
	}
	for _, tc := range []struct {
		name    string
		lengths []int
		withTC  bool
		withDC  bool
		withIn  bool
	}{{"all-active", nil, true, true, false}, {"masked", lengths, true, true, false}, {"no-tc-no-dc", lengths, false, false, false},
		{"input-rows", lengths, true, true, true}, {"input-rows-no-dc", nil, true, false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			pre, cPrev := randSlice(B*4*H, 3), randSlice(B*H, 2)
			dhExt, dcExt, dhNext, dcNext := randSlice(B*H, 1), randSlice(B*H, 1), randSlice(B*H, 1), randSlice(B*H, 1)
			type result struct{ gates, c, h, tc, dg, dcn, dProj []float32 }
			run := func(pureGo bool, p *cellPool) result {
				r := result{gates: append([]float32(nil), pre...), c: make([]float32, B*H), h: make([]float32, B*H)}
				if tc.withTC {
					r.tc = make([]float32, B*H)
				}
				fj := cellJob{hidden: H, forget: 1, t: 1, lengths: tc.lengths, pureGo: pureGo,
					gates: r.gates, cPrev: cPrev, c: r.c, h: r.h, tc: r.tc}
				if tc.withIn {
					fj.in, fj.tokens = in, in.tokens
				}
				p.run(fj, B)
				if !tc.withTC {
					return r
				}
				r.dg, r.dcn = make([]float32, B*4*H), append([]float32(nil), dcNext...)
				j := cellJob{backward: true, hidden: H, t: 1, lengths: tc.lengths, pureGo: pureGo,
					gates: r.gates, cPrev: cPrev, tc: r.tc, dhExt: dhExt, dhNext: dhNext, dcNext: r.dcn, dGates: r.dg}
				if tc.withDC {
					j.dcExt = dcExt
				}
				var parts [][]float32
				if tc.withIn {
					for range p.parts() {
						parts = append(parts, make([]float32, len(in.proj)))
					}
					j.in, j.tokens, j.dProjParts = in, in.tokens, parts
				}
				p.run(j, B)
				if tc.withIn {
					r.dProj = make([]float32, len(in.proj))
					for _, part := range parts {
						for i, v := range part {
							r.dProj[i] += v
						}
					}
				}
				return r
			}
			want := run(true, nil)
			for _, v := range []struct {
				name   string
				pureGo bool
				pool   *cellPool
			}{{"kernel", false, nil}, {"kernel+pool", false, pool}, {"go+pool", true, pool}} {
				got := run(v.pureGo, v.pool)
				for _, pair := range []struct {
					what string
					a, b []float32
				}{{"gates", got.gates, want.gates}, {"c", got.c, want.c}, {"h", got.h, want.h}, {"tc", got.tc, want.tc},
					{"dGates", got.dg, want.dg}, {"dcNext", got.dcn, want.dcn}, {"dProj", got.dProj, want.dProj}} {
					if len(pair.a) != len(pair.b) {
						t.Fatalf("%s %s: length %d vs %d", v.name, pair.what, len(pair.a), len(pair.b))
					}
					for i := range pair.a {
						// float32 math of a few ulp, scaled by the values involved.
						// dProj sums up to B rows in another order: a few ulp of that sum.
						tol := 2e-6
						if pair.what == "dProj" {
							tol = 1e-5
						}
						if d := math.Abs(float64(pair.a[i] - pair.b[i])); d > tol*(1+math.Abs(float64(pair.b[i]))) {
							t.Fatalf("%s %s[%d] = %v, want %v", v.name, pair.what, i, pair.a[i], pair.b[i])
						}
					}
				}
			}
		})
	}
}

// TestScatterIndependentOfWorkers: the input-projection gradient that the backward cell jobs
// scatter into partial sums is the same, bit for bit, whatever the number of goroutines, so
// training does not depend on the machine's core count (GOMAXPROCS).
func TestScatterIndependentOfWorkers(t *testing.T) {
	const B, H, F = 70, 128, 2 // B*H above parallelMinCells
	rng := nn.NewRand(4, 4)
	randSlice := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(rng.NormFloat64())
		}
		return s
	}
	in := &inputRows{proj: randSlice(6 * 4 * H), offs: []int32{0, 3}}
	in.bias = in.proj[5*4*H:]
	in.tokens = make([]int32, B*F)
	for i := range in.tokens {
		in.tokens[i] = int32(rng.IntN(2)) // few tokens: many rows add into the same gradient row
	}
	gates, cPrev, tc := randSlice(B*4*H), randSlice(B*H), randSlice(B*H)
	dhExt, dhNext := randSlice(B*H), randSlice(B*H)
	dProj := func(p *cellPool) []float32 {
		var parts [][]float32
		for range p.parts() {
			parts = append(parts, make([]float32, len(in.proj)))
		}
		j := cellJob{backward: true, hidden: H, gates: gates, cPrev: cPrev, tc: tc, dhExt: dhExt,
			dhNext: dhNext, dcNext: make([]float32, B*H), dGates: make([]float32, B*4*H),
			in: in, tokens: in.tokens, dProjParts: parts}
		p.run(j, B)
		sum := make([]float32, len(in.proj))
		for _, part := range parts {
			for i, v := range part {
				sum[i] += v
			}
		}
		return sum
	}
	want := dProj(nil)
	for _, n := range []int{2, 3, 8} {
		got := dProj(newCellPoolOf(n))
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%d goroutines: dProj[%d] = %v, one goroutine %v", n, i, got[i], want[i])
			}
		}
	}
}
