package nn_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Lanes of a large layer, each running blocks of the batch's rows, give each row of the output
// the bits the layer gives for the whole batch, and dx and the gradients (added to the layer's
// lane by lane) within float rounding: the sums run in another order.
// A lane over other values computes with those, and a Refresh makes it read changed values.
func TestLanesMatchTheLayer(t *testing.T) {
	const rows, in, out = 300, 6, 4096 // rows x out >= 2^20: the layer folds its bias, as a lane does
	for _, eng := range []*tensor.Engine{tensor.GonumEngine(), mustEngine(t)} {
		rng := rand.New(rand.NewPCG(1, 2))
		l, err := nn.NewLinear(eng, "big", in, out, true, rng)
		if err != nil {
			t.Fatal(err)
		}
		for i := range l.B.Value.Data {
			l.B.Value.Data[i] = float32(rng.NormFloat64())
		}
		x, dy := tensor.New(rows, in), tensor.New(rows, out)
		for _, m := range []*tensor.Matrix{x, dy} {
			for i := range m.Data {
				m.Data[i] = float32(rng.NormFloat64())
			}
		}
		y, err := l.Forward(x)
		if err != nil {
			t.Fatal(err)
		}
		wantY := y.Clone()
		wantDx := tensor.New(rows, in)
		if err := l.Backward(dy, wantDx, false); err != nil {
			t.Fatal(err)
		}
		wantW, wantB := l.W.Grad.Clone(), l.B.Grad.Clone()
		l.W.Grad.Zero()
		l.B.Grad.Zero()
		lanes := []*nn.Linear{l.Lane(nil, nil), l.Lane(nil, nil)}
		for b, lo := 0, 0; lo < rows; b, lo = b+1, lo+70 {
			hi := min(rows, lo+70)
			lane := lanes[b%2]
			yb, err := lane.Forward(x.RowSlice(lo, hi))
			if err != nil {
				t.Fatal(err)
			}
			dx := tensor.New(hi-lo, in)
			if err := lane.Backward(dy.RowSlice(lo, hi), dx, false); err != nil {
				t.Fatal(err)
			}
			for i, v := range yb.Data {
				if v != wantY.Data[lo*out+i] {
					t.Fatalf("%s: lane output row %d differs: %v, layer %v", eng.Backend(), lo+i/out, v, wantY.Data[lo*out+i])
				}
			}
			// dx = dy·Wᵀ sums over the 4096 outputs: pure Go's sgemm takes its serial kernel
			// for a block and its parallel one for the batch, which sum in another order.
			for i, v := range dx.Data {
				if w := wantDx.Data[lo*in+i]; math.Abs(float64(v-w)) > 1e-4*math.Max(1, math.Abs(float64(w))) {
					t.Fatalf("%s: lane dx row %d differs: %v, layer %v", eng.Backend(), lo+i/in, v, w)
				}
			}
		}
		l.AddLaneGrads(lanes...)
		for _, c := range []struct{ got, want *tensor.Matrix }{{l.W.Grad, wantW}, {l.B.Grad, wantB}} {
			for i, v := range c.want.Data {
				if d := math.Abs(float64(c.got.Data[i] - v)); d > 1e-4*math.Max(1, math.Abs(float64(v))) {
					t.Fatalf("%s: lane gradient entry %d is %v, layer's %v", eng.Backend(), i, c.got.Data[i], v)
				}
			}
		}
		// A lane over other values, refreshed after they change.
		w2 := l.W.Value.Clone()
		lane := l.Lane(w2, nil)
		before, _ := lane.Forward(x.RowSlice(0, 10))
		first := before.At(0, 0)
		for i := range w2.Data {
			w2.Data[i] *= 2
		}
		lane.Refresh()
		after, _ := lane.Forward(x.RowSlice(0, 10))
		if after.At(0, 0) == first {
			t.Errorf("%s: a refreshed lane did not read its changed values", eng.Backend())
		}
	}
}

func mustEngine(t testing.TB) *tensor.Engine {
	e, err := tensor.NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	return e
}
