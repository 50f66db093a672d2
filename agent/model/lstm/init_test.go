package lstm

import (
	"math"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// testSpec is Copy's at base 2: |A| = 8.
var testSpec = Spec{ObsVocab: 3, ActionComponents: []int{2, 2, 2}}

// The LSTM's head initialisations: LogitInitScale scales the policy head (0: an exactly uniform
// first policy), LambdaInit "alpha" starts the multiplier's log-scale bias at log alpha, EmbedStd
// sets the embeddings' spread, and the defaults leave Default's network as it was.
func TestLSTMHeadInitialisations(t *testing.T) {
	build := func(edit func(*config.Config)) *Model {
		cfg := config.Default()
		cfg.Hidden, cfg.Alpha = 16, 0.05
		edit(&cfg)
		m, err := New(cfg, testSpec, tensor.GonumEngine())
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	def := build(func(*config.Config) {})
	w, _ := def.Net.Head(0)
	if w.Value.Data[0] == 0 {
		t.Fatal("the default policy head is zero")
	}
	zero := build(func(c *config.Config) { c.LogitInitScale = 0 })
	zw, zb := zero.Net.Head(0)
	for k := range zw.Value.Data {
		if zw.Value.Data[k] != 0 {
			t.Fatalf("scale 0: policy weight %d is %v", k, zw.Value.Data[k])
		}
	}
	for k := range zb.Value.Data {
		if zb.Value.Data[k] != 0 {
			t.Fatalf("scale 0: policy bias %d is %v", k, zb.Value.Data[k])
		}
	}
	half := build(func(c *config.Config) { c.LogitInitScale = 0.5 })
	hw, _ := half.Net.Head(0)
	if hw.Value.Data[3] != 0.5*w.Value.Data[3] {
		t.Errorf("scale 0.5: weight %v, Glorot's %v", hw.Value.Data[3], w.Value.Data[3])
	}

	for _, algo := range []config.Algo{config.AlgoSparse, config.AlgoTsallis} {
		m := build(func(c *config.Config) { c.Algo, c.LambdaInit = algo, config.LambdaInitAlpha })
		_, lb := m.Net.Head(m.LambdaHead)
		if got := float64(lb.Value.Data[0]); math.Abs(got-math.Log(0.05)) > 1e-6 {
			t.Errorf("%s: lambda log-scale bias %v, want log 0.05 = %v", algo, got, math.Log(0.05))
		}
		d := build(func(c *config.Config) { c.Algo = algo })
		if _, lb := d.Net.Head(d.LambdaHead); lb.Value.Data[0] != 0 {
			t.Errorf("%s: the default lambda log-scale bias is %v, want 0", algo, lb.Value.Data[0])
		}
	}

	spread := func(m *Model) float64 {
		p := m.Net.Params()[0] // embed.table0
		s := 0.0
		for _, v := range p.Value.Data {
			s += float64(v) * float64(v)
		}
		return math.Sqrt(s / float64(len(p.Value.Data)))
	}
	if s0, s1 := spread(def), spread(build(func(c *config.Config) { c.EmbedStd = 0.1 })); !(s0 < 0.02 && s1 > 0.05) {
		t.Errorf("embedding rms %v at std 0.01 and %v at 0.1", s0, s1)
	}
}
