package nntest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/nn"
)

// recorder is a testing.TB that records failures instead of failing the test.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// On L = Σ sin(θ_i) θ_i² the exact gradient passes, and a gradient off by a factor of two, of the
// wrong sign, or wrong in one element by 10% of the whole, fails; the values come back unchanged.
func TestCheckDirectional(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a, b := nn.NewParam("a", 3, 4), nn.NewParam("b", 1, 5)
	params := []*nn.Param{a, b}
	for _, p := range params {
		for k := range p.Value.Data {
			p.Value.Data[k] = float32(rng.NormFloat64())
		}
	}
	loss := func() float64 {
		s := 0.0
		for _, p := range params {
			for _, v := range p.Value.Data {
				x := float64(v)
				s += math.Sin(x) * x * x
			}
		}
		return s
	}
	exact := func() {
		for _, p := range params {
			for k, v := range p.Value.Data {
				x := float64(v)
				p.Grad.Data[k] = float32(math.Cos(x)*x*x + 2*x*math.Sin(x))
			}
		}
	}
	before := append([]float32(nil), a.Value.Data...)
	for _, tc := range []struct {
		name  string
		spoil func()
		fails bool
	}{
		{"exact", func() {}, false},
		{"doubled", func() {
			for _, p := range params {
				for k := range p.Grad.Data {
					p.Grad.Data[k] *= 2
				}
			}
		}, true},
		{"sign", func() {
			for k := range b.Grad.Data {
				b.Grad.Data[k] = -b.Grad.Data[k]
			}
		}, true},
		{"one element", func() {
			norm := 0.0
			for _, p := range params {
				for _, g := range p.Grad.Data {
					norm += float64(g) * float64(g)
				}
			}
			a.Grad.Data[5] += float32(0.1 * math.Sqrt(norm))
		}, true},
	} {
		exact()
		tc.spoil()
		r := &recorder{TB: t}
		CheckDirectional(r, params, loss, rand.New(rand.NewPCG(3, 4)), 3, tc.name)
		if failed := len(r.errors) > 0; failed != tc.fails {
			t.Errorf("%s: failed %v (%v), want %v", tc.name, failed, r.errors, tc.fails)
		}
	}
	for k, v := range a.Value.Data {
		if v != before[k] {
			t.Fatalf("value %d changed from %v to %v", k, before[k], v)
		}
	}
}
