package optim

import (
	"math"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/nn"
)

func param(name string, vals, grads []float32) *nn.Param {
	p := nn.NewParam(name, 1, len(vals))
	copy(p.Value.Data, vals)
	copy(p.Grad.Data, grads)
	return p
}

// TestAdamMatchesTFFormula replays two steps of TF's Adam in float64.
func TestAdamMatchesTFFormula(t *testing.T) {
	cases := []struct {
		name    string
		lr, eps float64
		g1, g2  []float32
	}{
		{"defaults", 0.01, 2e-4, []float32{0.5, -2, 1e-3}, []float32{0.1, 3, -1e-3}},
		{"big-eps", 0.1, 1, []float32{0.5, -2, 0}, []float32{-0.5, 2, 4}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := param("w", []float32{1, 2, 3}, tc.g1)
			a, err := NewAdam([]*nn.Param{p}, AdamConfig{LearningRate: tc.lr, Epsilon: tc.eps})
			if err != nil {
				t.Fatal(err)
			}
			w := []float64{1, 2, 3}
			m, v := make([]float64, 3), make([]float64, 3)
			for step, g := range [][]float32{tc.g1, tc.g2} {
				copy(p.Grad.Data, g)
				if err := a.Step(); err != nil {
					t.Fatal(err)
				}
				tt := float64(step + 1)
				lrT := tc.lr * math.Sqrt(1-math.Pow(0.999, tt)) / (1 - math.Pow(0.9, tt))
				for k := range w {
					m[k] = 0.9*m[k] + 0.1*float64(g[k])
					v[k] = 0.999*v[k] + 0.001*float64(g[k])*float64(g[k])
					w[k] -= lrT * m[k] / (math.Sqrt(v[k]) + tc.eps)
					if d := math.Abs(float64(p.Value.Data[k]) - w[k]); d > 1e-6 {
						t.Fatalf("step %d element %d: got %v want %v", step+1, k, p.Value.Data[k], w[k])
					}
				}
			}
		})
	}
}

func TestAdamRefusesNonFinite(t *testing.T) {
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		ok := param("ok", []float32{1, 1}, []float32{1, 1})
		p := param("lstm.Wh", []float32{1, 2, 3, 4}, []float32{0, 0, bad, 0})
		a, err := NewAdam([]*nn.Param{ok, p}, DefaultAdamConfig(0.1))
		if err != nil {
			t.Fatal(err)
		}
		err = a.Step()
		if err == nil || !strings.Contains(err.Error(), "lstm.Wh") || !strings.Contains(err.Error(), "col 2") {
			t.Fatalf("gradient %v: got %v, want an error naming lstm.Wh col 2", bad, err)
		}
		if ok.Value.Data[0] != 1 || p.Value.Data[0] != 1 {
			t.Fatalf("a refused step changed parameters: %v %v", ok.Value.Data, p.Value.Data)
		}
	}
}

func TestAdamConfigErrors(t *testing.T) {
	p := param("w", []float32{1}, []float32{1})
	for _, cfg := range []AdamConfig{{LearningRate: 0}, {LearningRate: -1}, {LearningRate: 1, Beta1: 1}, {LearningRate: 1, Epsilon: -1}} {
		if _, err := NewAdam([]*nn.Param{p}, cfg); err == nil {
			t.Errorf("config %+v accepted", cfg)
		}
	}
	if _, err := NewAdam([]*nn.Param{p, param("w", []float32{1}, []float32{1})}, DefaultAdamConfig(1)); err == nil || !strings.Contains(err.Error(), `"w"`) {
		t.Errorf("duplicate name: got %v", err)
	}
}

func TestClipGlobalNorm(t *testing.T) {
	cases := []struct {
		name     string
		maxNorm  float64
		wantNorm float64
		want     []float32
	}{
		{"clips", 1, 5, []float32{0.6, 0.8}},
		{"below", 10, 5, []float32{3, 4}},
		{"disabled", 0, 5, []float32{3, 4}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := param("a", []float32{0}, []float32{3})
			b := param("b", []float32{0}, []float32{4})
			norm := ClipGlobalNorm([]*nn.Param{a, b}, tc.maxNorm)
			if math.Abs(norm-tc.wantNorm) > 1e-6 {
				t.Fatalf("norm %v, want %v", norm, tc.wantNorm)
			}
			got := []float32{a.Grad.Data[0], b.Grad.Data[0]}
			for i := range got {
				if math.Abs(float64(got[i]-tc.want[i])) > 1e-6 {
					t.Fatalf("grads %v, want %v", got, tc.want)
				}
			}
		})
	}
	nan := param("n", []float32{0}, []float32{float32(math.NaN())})
	if n := ClipGlobalNorm([]*nn.Param{nan}, 1); !math.IsNaN(n) {
		t.Fatalf("NaN gradient gave norm %v", n)
	}
}
