package tensor

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// openBLASForTest returns the OpenBLAS engine, skipping when it is missing
// (and failing under CI=true, where it must be installed).
func openBLASForTest(t *testing.T) *Engine {
	t.Helper()
	e, err := OpenBLASEngine()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("OpenBLAS required under CI=true: %v", err)
		}
		t.Skipf("OpenBLAS not available: %v", err)
	}
	return e
}

func randMatrix(rng *rand.Rand, r, c int) *Matrix {
	m := New(r, c)
	for i := range m.Data {
		m.Data[i] = float32(rng.NormFloat64())
	}
	return m
}

// naive computes alpha*op(a)*op(b)+beta*c in float64 as the reference.
func naive(a *Matrix, ta bool, b *Matrix, tb bool, alpha, beta float32, c *Matrix) []float64 {
	get := func(m *Matrix, t bool, i, j int) float64 {
		if t {
			return float64(m.At(j, i))
		}
		return float64(m.At(i, j))
	}
	k := a.Cols
	if ta {
		k = a.Rows
	}
	out := make([]float64, c.Rows*c.Cols)
	for i := 0; i < c.Rows; i++ {
		for j := 0; j < c.Cols; j++ {
			var s float64
			for p := 0; p < k; p++ {
				s += get(a, ta, i, p) * get(b, tb, p, j)
			}
			out[i*c.Cols+j] = float64(alpha)*s + float64(beta)*float64(c.At(i, j))
		}
	}
	return out
}

func TestBackendsAgreeOnGemm(t *testing.T) {
	engines := []*Engine{GonumEngine(), openBLASForTest(t)}
	cases := []struct {
		name        string
		m, n, k     int
		ta, tb      bool
		alpha, beta float32
	}{
		{"NN", 37, 29, 53, false, false, 1, 0},
		{"TN", 64, 17, 33, true, false, 0.5, 1},
		{"NT", 5, 129, 70, false, true, 1, -2},
		{"TT", 1, 1, 300, true, true, 2, 0.25},
		{"paper-gates", 400, 512, 128, false, false, 1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.m*1000+tc.n)))
			ar, ac := tc.m, tc.k
			if tc.ta {
				ar, ac = ac, ar
			}
			br, bc := tc.k, tc.n
			if tc.tb {
				br, bc = bc, br
			}
			a, b, c0 := randMatrix(rng, ar, ac), randMatrix(rng, br, bc), randMatrix(rng, tc.m, tc.n)
			want := naive(a, tc.ta, b, tc.tb, tc.alpha, tc.beta, c0)
			var results [][]float32
			for _, e := range engines {
				c := c0.Clone()
				if err := e.MatMul(c, a, tc.ta, b, tc.tb, tc.alpha, tc.beta); err != nil {
					t.Fatalf("%s: %v", e.Backend(), err)
				}
				// float32 accumulation over k terms of unit variance: error ~ eps*sqrt(k)*|terms|.
				tol := 1e-5 * float64(tc.k)
				for i, w := range want {
					if d := math.Abs(float64(c.Data[i]) - w); d > tol {
						t.Fatalf("%s: element %d = %v, want %v (diff %g > %g)", e.Backend(), i, c.Data[i], w, d, tol)
					}
				}
				results = append(results, c.Data)
			}
			for i := range results[0] {
				if d := math.Abs(float64(results[0][i] - results[1][i])); d > 1e-5*float64(tc.k) {
					t.Fatalf("backends disagree at %d: %v vs %v", i, results[0][i], results[1][i])
				}
			}
		})
	}
}

func TestMatMulShapeErrors(t *testing.T) {
	e := GonumEngine()
	cases := []struct {
		name    string
		dst     *Matrix
		a, b    *Matrix
		ta, tb  bool
		wantSub string
	}{
		{"inner", New(2, 3), New(2, 4), New(5, 3), false, false, "a 2x4"},
		{"dst", New(3, 3), New(2, 4), New(4, 3), false, false, "dst 3x3"},
		{"trans inner", New(4, 3), New(2, 4), New(4, 3), true, false, "b 4x3"},
		{"nil", nil, New(1, 1), New(1, 1), false, false, "nil"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := e.MatMul(tc.dst, tc.a, tc.ta, tc.b, tc.tb, 1, 0)
			if err == nil || !strings.Contains(err.Error(), tc.wantSub) {
				t.Fatalf("got %v, want an error containing %q", err, tc.wantSub)
			}
		})
	}
}

func TestEngineFor(t *testing.T) {
	if e, err := EngineFor("gonum"); err != nil || !strings.HasPrefix(e.Backend(), "gonum") {
		t.Fatalf("gonum: %v %v", e, err)
	}
	if _, err := EngineFor("mkl"); err == nil || !strings.Contains(err.Error(), `"mkl"`) {
		t.Fatalf("unknown backend: got %v", err)
	}
	e, err := EngineFor("auto")
	if err != nil {
		t.Fatal(err)
	}
	ob := openBLASForTest(t)
	if e.Backend() != ob.Backend() {
		t.Fatalf("auto picked %q although %q loads", e.Backend(), ob.Backend())
	}
	t.Setenv(EnvBackend, "gonum")
	if e, err := NewEngine(); err != nil || !strings.HasPrefix(e.Backend(), "gonum") {
		t.Fatalf("%s=gonum gave %v %v", EnvBackend, e, err)
	}
}

func TestFromSliceAndShapes(t *testing.T) {
	if _, err := FromSlice(2, 3, make([]float32, 5)); err == nil || !strings.Contains(err.Error(), "2x3") {
		t.Fatalf("got %v", err)
	}
	m := New(4, 2)
	for i := range m.Data {
		m.Data[i] = float32(i)
	}
	if v := m.RowSlice(1, 3); v.Rows != 2 || v.At(0, 1) != 3 {
		t.Fatalf("RowSlice wrong: %+v", v)
	}
	if err := CheckShape(m, 4, 3, "x"); err == nil || !strings.Contains(err.Error(), "4x2") {
		t.Fatalf("got %v", err)
	}
	m.Data[5] = float32(math.NaN())
	if m.FirstNonFinite() != 5 {
		t.Fatal("NaN not found")
	}
}
