package wrappers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
)

func TestTupleCombinerRoundTrip(t *testing.T) {
	tests := []envs.Tuple{
		{Spaces: []envs.Space{envs.Discrete{N: 2}, envs.Discrete{N: 2}, envs.Discrete{N: 5}}},
		{Spaces: []envs.Space{envs.Discrete{N: 4}, envs.Discrete{N: 2}, envs.Discrete{N: 40}}},
		{Spaces: []envs.Space{envs.Discrete{N: 3, Start: -1}, envs.Discrete{N: 1, Start: 7}, envs.Discrete{N: 6, Start: 2}}},
		{Spaces: []envs.Space{envs.Discrete{N: 9}}},
	}
	for _, tup := range tests {
		c, err := NewTupleCombiner(tup)
		if err != nil {
			t.Fatal(err)
		}
		n := int64(1)
		for _, s := range tup.Spaces {
			n *= s.(envs.Discrete).N
		}
		if c.Space().N != n {
			t.Fatalf("%v: %v", tup, c.Space())
		}
		seen := map[string]bool{}
		for i := range n {
			a, err := c.Action(i)
			if err != nil || tup.Check(a) != nil {
				t.Fatalf("%v index %d: %v %v", tup, i, a, err)
			}
			// first component least significant
			d0 := tup.Spaces[0].(envs.Discrete)
			if a[0].(int64)-d0.Start != i%d0.N {
				t.Fatalf("%v index %d: first component %v", tup, i, a[0])
			}
			back, err := c.Index(a)
			if err != nil || back != i {
				t.Fatalf("%v: %d -> %v -> %d (%v)", tup, i, a, back, err)
			}
			seen[fmt.Sprint(a...)] = true
		}
		if int64(len(seen)) != n {
			t.Fatalf("%v: %d distinct actions for %d indices", tup, len(seen), n)
		}
	}
	// the algorithmic formula a = move + M*write + 2*M*char
	c, _ := NewTupleCombiner(envs.Tuple{Spaces: []envs.Space{envs.Discrete{N: 4}, envs.Discrete{N: 2}, envs.Discrete{N: 3}}})
	if i, _ := c.Index([]any{int64(3), int64(1), int64(2)}); i != 3+4*1+8*2 {
		t.Errorf("index %d", i)
	}
	bad := []envs.Space{envs.Discrete{N: 3}, envs.Tuple{Spaces: []envs.Space{envs.Box{}}}, envs.Tuple{}, envs.Tuple{Spaces: []envs.Space{envs.Discrete{N: 0}}},
		envs.Tuple{Spaces: []envs.Space{envs.Discrete{N: 1 << 40}, envs.Discrete{N: 1 << 40}}}}
	for _, s := range bad {
		if _, err := NewTupleCombiner(s); err == nil {
			t.Errorf("%v accepted", s)
		}
	}
	if _, err := c.Action(24); err == nil {
		t.Error("index out of range accepted")
	}
	if _, err := c.Index([]any{int64(4), int64(0), int64(0)}); err == nil {
		t.Error("component out of range accepted")
	}
}

func TestActionGridRoundTrip(t *testing.T) {
	tests := []struct {
		box envs.Box
		k   int
	}{
		{envs.NewBox(-1, 1, envs.Float32, 6), 2},
		{envs.NewBox(-1, 1, envs.Float32, 3), 5},
		{envs.Box{Low: []float64{0, -3, 10}, High: []float64{1, 3, 10}, Shape: []int{3}, Dtype: envs.Float64}, 4},
		{envs.Box{Low: []float64{-0.4, 0, 2, 5}, High: []float64{0.4, 1, 3, 6}, Shape: []int{2, 2}, Dtype: envs.Float32}, 3},
	}
	for _, tc := range tests {
		g, err := NewActionGrid(tc.box, tc.k)
		if err != nil {
			t.Fatal(err)
		}
		d := tc.box.FlatSize()
		if want := int64(math.Pow(float64(tc.k), float64(d))); g.Space().N != want {
			t.Fatalf("%v k=%d: %v, want %d", tc.box, tc.k, g.Space(), want)
		}
		p := make([]float64, d)
		for i := range g.Space().N {
			if err := g.Point(i, p); err != nil {
				t.Fatal(err)
			}
			if err := tc.box.Check(p); err != nil {
				t.Fatalf("index %d: point %v outside the box: %v", i, p, err)
			}
			rest := i
			for dim := range d { // point j = low + j*(high-low)/(k-1), first dimension least significant
				j := rest % int64(tc.k)
				rest /= int64(tc.k)
				want := tc.box.Low[dim] + float64(j)*(tc.box.High[dim]-tc.box.Low[dim])/float64(tc.k-1)
				if math.Abs(p[dim]-want) > 1e-12 {
					t.Fatalf("index %d dim %d: %v, want %v", i, dim, p[dim], want)
				}
			}
			back, err := g.Index(p)
			degenerate := slices.ContainsFunc(tc.box.Low, func(lo float64) bool { return lo == 10 })
			if err != nil || (back != i && !degenerate) {
				t.Fatalf("%d -> %v -> %d (%v)", i, p, back, err)
			}
		}
	}
	// nearest point
	g, _ := NewActionGrid(envs.NewBox(-1, 1, envs.Float32, 2), 3)
	if i, _ := g.Index([]float64{0.4, -0.9}); i != 1+3*0 {
		t.Errorf("nearest of (0.4, -0.9): %d", i)
	}
	if _, err := g.Index([]float64{1.5, 0}); err == nil {
		t.Error("point outside the box accepted")
	}
	bad := []struct {
		s envs.Space
		k int
	}{
		{envs.NewBox(-1, 1, envs.Float32, 2), 1},
		{envs.NewBox(math.Inf(-1), 1, envs.Float32, 2), 3},
		{envs.NewBox(0, math.Inf(1), envs.Float64, 1), 3},
		{envs.NewBox(-1, 1, envs.Float32, 63), 2},
		{envs.NewBox(-1, 1, envs.Float32, 28), 5},
		{envs.NewBox(-1, 1, envs.Int64, 2), 3},
		{envs.Discrete{N: 3}, 3},
	}
	for _, b := range bad {
		if _, err := NewActionGrid(b.s, b.k); err == nil {
			t.Errorf("%v k=%d accepted", b.s, b.k)
		}
	}
	if _, err := NewActionGrid(envs.NewBox(-1, 1, envs.Float32, 62), 2); err != nil {
		t.Errorf("2^62 actions: %v", err)
	}
}

// echoVecEnv is a small environment for the wrapper tests: its observation is the action it was
// given, so what reaches the env can be read back.
type echoVecEnv struct {
	n      int
	space  envs.Box
	obs    envs.Array
	result envs.StepResult
}

func newEchoVecEnv(n int, space envs.Box) *echoVecEnv {
	e := &echoVecEnv{n: n, space: space, obs: envs.NewBatch(space, n)}
	e.result = envs.StepResult{Obs: e.obs, Rewards: make([]float64, n), Terminated: make([]bool, n), Truncated: make([]bool, n)}
	return e
}

func (e *echoVecEnv) NumEnvs() int                      { return e.n }
func (e *echoVecEnv) ObservationSpace() envs.Space      { return e.space }
func (e *echoVecEnv) ActionSpace() envs.Space           { return e.space }
func (e *echoVecEnv) AutoresetMode() envs.AutoresetMode { return envs.AutoresetNextStep }
func (e *echoVecEnv) Close() error                      { return nil }
func (e *echoVecEnv) Reset(context.Context, envs.ResetRequest) (envs.Array, []envs.Info, error) {
	return e.obs, nil, nil
}
func (e *echoVecEnv) Step(_ context.Context, a envs.Array) (envs.StepResult, error) {
	if a.DType != e.space.Dtype || a.Rows() != e.n || a.RowSize() != e.space.FlatSize() {
		return envs.StepResult{}, errBadActions
	}
	copy(e.obs.Floats, a.Floats)
	return e.result, nil
}

var errBadActions = errors.New("echo env: actions do not match the action space")

func TestDiscretizedVecEnv(t *testing.T) {
	ctx := context.Background()
	box := envs.NewBox(-1, 1, envs.Float32, 6) // HalfCheetah's action space
	inner := newEchoVecEnv(4, box)
	v, err := DiscretizeVecActions(inner, 3)
	if err != nil {
		t.Fatal(err)
	}
	if v.ActionSpace().(envs.Discrete).N != 729 {
		t.Fatalf("%v", v.ActionSpace())
	}
	acts := envs.Array{DType: envs.Int64, Shape: []int{4}, Ints: []int64{0, 728, 1, 3 * 3 * 3 * 3 * 3 * 2}}
	res, err := v.Step(ctx, acts)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{-1, -1, -1, -1, -1, -1}, {1, 1, 1, 1, 1, 1}, {0, -1, -1, -1, -1, -1}, {-1, -1, -1, -1, -1, 1}}
	for i, w := range want {
		if got := res.Obs.Floats[i*6 : i*6+6]; !slices.Equal(got, w) {
			t.Errorf("copy %d: %v, want %v", i, got, w)
		}
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := v.Step(ctx, acts); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocs per step", allocs)
	}
	for _, a := range []envs.Array{
		{DType: envs.Int64, Shape: []int{4}, Ints: []int64{0, 729, 0, 0}},
		{DType: envs.Int64, Shape: []int{4}, Ints: []int64{0, -1, 0, 0}},
		{DType: envs.Float32, Shape: []int{4}, Floats: []float64{0, 0, 0, 0}},
		{DType: envs.Int64, Shape: []int{3}, Ints: []int64{0, 0, 0}},
	} {
		if _, err := v.Step(ctx, a); err == nil {
			t.Errorf("actions %+v accepted", a)
		}
	}
}

// TestCombinedMatchesNative: the factored algorithmic env behind the combiner walks exactly the
// trajectory of the env's own combined action space, as a single Env and as a VecEnv.
func TestCombinedMatchesNative(t *testing.T) {
	ctx := context.Background()
	for _, task := range algorithmic.Tasks() {
		native, _ := algorithmic.NewEnv(algorithmic.Config{Task: task, Base: 5})
		fact, _ := algorithmic.NewEnv(algorithmic.Config{Task: task, Base: 5, FactoredActions: true})
		comb, err := CombineActions(fact)
		if err != nil {
			t.Fatal(err)
		}
		if comb.ActionSpace() != native.ActionSpace() || !slices.Equal(comb.ActionComponents(), native.ActionComponents()) {
			t.Fatalf("%v: %v vs %v", task, comb.ActionSpace(), native.ActionSpace())
		}
		nv, _ := algorithmic.NewVecEnv(algorithmic.Config{Task: task, Base: 5}, 3)
		fv, _ := algorithmic.NewVecEnv(algorithmic.Config{Task: task, Base: 5, FactoredActions: true}, 3)
		cv, err := CombineVecActions(fv)
		if err != nil {
			t.Fatal(err)
		}
		seed := int64(7)
		o1, _, _ := native.Reset(&seed, nil)
		o2, _, _ := comb.Reset(&seed, nil)
		seeds := []int64{1, 2, 3}
		nv.Reset(ctx, envs.ResetRequest{Seeds: seeds})
		cv.Reset(ctx, envs.ResetRequest{Seeds: seeds})
		nA := native.ActionSpace().(envs.Discrete).N
		acts := envs.NewArray(envs.Int64, 3)
		for k := range int64(300) {
			a := (k*7 + k/3) % nA
			if o1 != o2 {
				t.Fatalf("%v step %d: %v vs %v", task, k, o1, o2)
			}
			var r1, r2 float64
			var d1, d2 bool
			o1, r1, d1, _, _, _ = native.Step(a)
			o2, r2, d2, _, _, err = comb.Step(a)
			if err != nil || r1 != r2 || d1 != d2 {
				t.Fatalf("%v step %d: %v %v / %v %v (%v)", task, k, r1, d1, r2, d2, err)
			}
			if d1 {
				o1, _, _ = native.Reset(nil, nil)
				o2, _, _ = comb.Reset(nil, nil)
			}
			for i := range acts.Ints {
				acts.Ints[i] = (a + int64(i)) % nA
			}
			r, err := nv.Step(ctx, acts)
			if err != nil {
				t.Fatal(err)
			}
			want := r.Obs.Clone()
			wantR := slices.Clone(r.Rewards)
			got, err := cv.Step(ctx, acts)
			if err != nil || !slices.Equal(got.Obs.Ints, want.Ints) || !slices.Equal(got.Rewards, wantR) {
				t.Fatalf("%v vec step %d: %v vs %v (%v)", task, k, got.Obs.Ints, want.Ints, err)
			}
		}
	}
}

func TestTimeLimitTruncates(t *testing.T) {
	env, _ := algorithmic.NewEnv(algorithmic.Config{Task: algorithmic.Copy, Base: 5})
	tl, err := NewTimeLimit(env, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, _, err := tl.Step(int64(0)); err == nil {
		t.Error("step before reset accepted")
	}
	for ep := range 2 {
		if _, _, err := tl.Reset(nil, map[string]any{"input": []int64{1, 2, 3, 4, 0, 1}}); err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 3; i++ {
			_, r, term, trunc, _, err := tl.Step(int64(i % 2)) // move without writing
			if err != nil || r != 0 || term || trunc != (i == 3) {
				t.Fatalf("episode %d step %d: %v %v %v %v", ep, i, r, term, trunc, err)
			}
		}
		if _, _, _, _, _, err := tl.Step(int64(0)); err == nil {
			t.Error("step after truncation accepted")
		}
	}
	// the env's own termination passes through unchanged
	tl.Reset(nil, map[string]any{"input": []int64{1, 2, 3}})
	if _, r, term, trunc, _, err := tl.Step(int64(1 + 2 + 4*4)); err != nil || r != -0.5 || !term || trunc {
		t.Errorf("wrong write: %v %v %v %v", r, term, trunc, err)
	}
	if _, err := NewTimeLimit(env, 0); err == nil {
		t.Error("limit 0 accepted")
	}
}

// A MultiDiscrete combines like the Tuple of its Discretes, starts included.
func TestCombinerTakesMultiDiscrete(t *testing.T) {
	c, err := NewTupleCombiner(envs.MultiDiscrete{Nvec: []int64{3, 4}, Start: []int64{1, -1}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Space().N != 12 {
		t.Fatalf("combined size %d, want 12", c.Space().N)
	}
	dst := make([]int64, 2)
	for index := range int64(12) {
		if err := c.SplitInto(index, dst); err != nil {
			t.Fatal(err)
		}
		if want := []int64{1 + index%3, -1 + index/3}; dst[0] != want[0] || dst[1] != want[1] {
			t.Errorf("index %d: %v, want %v", index, dst, want)
		}
	}
	if _, err := NewTupleCombiner(envs.MultiBinary{N: 2}); err == nil {
		t.Error("MultiBinary: no error")
	}
}
