package algorithmic

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/envs"
)

func mustEnv(t testing.TB, task Task, base int) *Env {
	t.Helper()
	env, err := NewEnv(Config{Task: task, Base: base})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func step(t testing.TB, env *Env, m, w, c int64) (int64, float64, bool) {
	t.Helper()
	a, err := env.Combine(m, w, c)
	if err != nil {
		t.Fatal(err)
	}
	obs, r, term, trunc, _, err := env.Step(a)
	if err != nil {
		t.Fatal(err)
	}
	if trunc {
		t.Fatal("algorithmic tasks never truncate")
	}
	return obs.(int64), r, term
}

func TestWrongWriteEnds(t *testing.T) {
	for _, task := range Tasks() {
		for _, base := range testBases {
			env := mustEnv(t, task, base)
			for seed := range int64(20) {
				if _, _, err := env.Reset(&seed, nil); err != nil {
					t.Fatal(err)
				}
				want := env.Target()[0]
				wrong := (want + 1 + seed%int64(base-1)) % int64(base)
				if want >= int64(base) || wrong == want {
					t.Fatalf("bad test setup: %d %d", want, wrong)
				}
				// a correct first write where possible, so the wrong one is not always the first
				writes := 0
				if len(env.Target()) > 1 && seed%2 == 0 {
					if _, r, term := step(t, env, right, 1, want); r != 1 || term {
						t.Fatalf("%v: correct write gave %v %v", task, r, term)
					}
					writes = 1
					want = env.Target()[1]
					wrong = (want + 1) % int64(base)
				}
				_, r, term := step(t, env, right, 1, wrong)
				if r != -0.5 || !term {
					t.Fatalf("%v base %d: wrong write %d (target %d) after %d: reward %v term %v", task, base, wrong, want, writes, r, term)
				}
				if _, _, _, _, _, err := env.Step(int64(0)); err == nil || !strings.Contains(err.Error(), "ended") {
					t.Fatalf("step after the end: %v", err)
				}
			}
		}
	}
}

func TestTimeLimit(t *testing.T) {
	for _, task := range Tasks() {
		for _, base := range testBases {
			env := mustEnv(t, task, base)
			for seed := range int64(5) {
				if _, _, err := env.Reset(&seed, nil); err != nil {
					t.Fatal(err)
				}
				w, n := env.InputWidth(), env.TargetLength()
				limit := w + n + 4
				if task.Grid() {
					limit = 2*w + 4
				}
				if env.TimeLimit() != limit {
					t.Fatalf("%v: time limit %d, want %d", task, env.TimeLimit(), limit)
				}
				for i := 1; i <= limit; i++ {
					if _, r, term := step(t, env, int64(i%2), 0, 0); r != 0 || term {
						t.Fatalf("%v: idle step %d: %v %v", task, i, r, term)
					}
				}
				// a correct write on step limit+1 still gets -1
				_, r, term := step(t, env, right, 1, env.Target()[0])
				if r != -1 || !term {
					t.Fatalf("%v: step %d: %v %v, want -1 and the end", task, limit+1, r, term)
				}
			}
		}
	}
}

// TestBlankOffInput walks the head off the input in every direction: every read is blank, and the
// head is never clamped (walking back finds the input again).
func TestBlankOffInput(t *testing.T) {
	type walk struct {
		move, n int64
	}
	tapeWalks := [][]walk{{{left, 3}, {right, 3}}, {{right, 6}, {left, 4}}, {{left, 4}, {right, 5}}}
	gridWalks := [][]walk{
		{{left, 2}, {right, 2}}, {{up, 3}, {down, 3}}, {{right, 3}, {down, 1}, {left, 3}, {up, 1}},
		{{down, 4}, {up, 4}}, {{left, 1}, {up, 1}, {right, 1}, {down, 1}},
	}
	for _, task := range Tasks() {
		for _, base := range testBases {
			env := mustEnv(t, task, base)
			walks := tapeWalks
			var input any = []int64{1, 1, 0, 1}
			cells := map[[2]int]int64{{0, 0}: 1, {1, 0}: 1, {2, 0}: 0, {3, 0}: 1}
			if task.Grid() {
				walks = gridWalks
				if task.Rows() == 2 {
					input = [][]int64{{1, 0}, {0, 1}}
					cells = map[[2]int]int64{{0, 0}: 1, {0, 1}: 0, {1, 0}: 0, {1, 1}: 1}
				} else {
					input = [][]int64{{1, 0, 1}, {0, 1, 1}}
					cells = map[[2]int]int64{{0, 0}: 1, {0, 1}: 0, {0, 2}: 1, {1, 0}: 0, {1, 1}: 1, {1, 2}: 1}
				}
			}
			for _, wk := range walks {
				if _, _, err := env.Reset(nil, map[string]any{OptInput: input}); err != nil {
					t.Fatal(err)
				}
				x, y := 0, 0
				for _, seg := range wk {
					for range seg.n {
						obs, _, term := step(t, env, seg.move, 0, 0)
						x += []int{-1, 1, 0, 0}[seg.move]
						y += []int{0, 0, -1, 1}[seg.move]
						want, on := cells[[2]int{x, y}]
						if !on {
							want = int64(base)
						}
						if obs != want || term {
							t.Fatalf("%v base %d at (%d,%d): obs %d term %v, want %d\n%s", task, base, x, y, obs, term, want, env.Render())
						}
					}
				}
			}
		}
	}
}

func TestCurriculumRecord(t *testing.T) {
	perfect, fail, minusOne := 0.0, -1.5, -1.0
	tests := []struct {
		name       string
		task       Task
		shortfalls []float64
		want       int // min_length after
		recorded   int
	}{
		{"nine perfect: not yet", Copy, slices.Repeat([]float64{perfect}, 9), 2, 9},
		{"ten perfect: level up", Copy, slices.Repeat([]float64{perfect}, 10), 3, 0},
		{"minus one counts for Copy", Copy, slices.Repeat([]float64{minusOne}, 10), 3, 0},
		{"a failure blocks until it leaves the window", Copy, append([]float64{fail}, slices.Repeat([]float64{perfect}, 10)...), 3, 0},
		{"a failure in the window blocks", Copy, append(slices.Repeat([]float64{perfect}, 5), append([]float64{fail}, slices.Repeat([]float64{perfect}, 9)...)...), 2, 10},
		{"twenty perfect: two levels", Copy, slices.Repeat([]float64{perfect}, 20), 4, 0},
		{"Reverse needs fifty", Reverse, slices.Repeat([]float64{perfect}, 49), 1, 49},
		{"Reverse: fifty", Reverse, slices.Repeat([]float64{perfect}, 50), 2, 0},
		{"Reverse: -1 does not count", Reverse, slices.Repeat([]float64{minusOne}, 50), 1, 50},
		{"RepeatCopy: -0.1 counts", RepeatCopy, slices.Repeat([]float64{-0.1}, 50), 3, 0},
		{"cap at 30", Copy, slices.Repeat([]float64{perfect}, 10*40), 30, 10},
		{"Reverse cap at 30", Reverse, slices.Repeat([]float64{perfect}, 50*40), 30, 50},
	}
	for _, tc := range tests {
		c := newCurriculum(tc.task)
		for _, s := range tc.shortfalls {
			c.record(s)
		}
		if c.MinLength() != tc.want || c.Recorded() != tc.recorded {
			t.Errorf("%s: min_length %d recorded %d, want %d %d", tc.name, c.MinLength(), c.Recorded(), tc.want, tc.recorded)
		}
	}
}

// solveAll plays every running copy of a VecEnv (autoreset disabled) to the end with the optimal
// policy.
func solveAll(t *testing.T, v *VecEnv, obs envs.Array) {
	t.Helper()
	n := v.NumEnvs()
	pol := make([]scripted, n)
	for i := range pol {
		pol[i] = scripted{task: v.Task(), base: int64(v.Base())}
	}
	done := make([]bool, n)
	act := envs.NewArray(envs.Int64, n)
	cur := slices.Clone(obs.Ints)
	for !slices.Equal(done, slices.Repeat([]bool{true}, n)) {
		for i := range pol {
			if done[i] {
				act.Ints[i] = 0
				continue
			}
			m, w, c := pol[i].act(cur[i])
			act.Ints[i] = m + v.c.moves*w + 2*v.c.moves*c
		}
		res, err := v.Step(context.Background(), act)
		if err != nil {
			t.Fatal(err)
		}
		copy(cur, res.Obs.Ints)
		for i := range done {
			done[i] = res.Terminated[i]
		}
	}
}

func TestSharedCurriculum(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		n       int
		perCopy bool
		want    int // min_length of copy 0 after the second batch reset
	}{
		{9, false, 2}, {10, false, 3}, {25, false, 4}, {25, true, 2},
	}
	for _, tc := range tests {
		v, err := NewVecEnv(Config{Task: Copy, Base: 5, Autoreset: envs.AutoresetDisabled, PerCopyCurriculum: tc.perCopy}, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		obs, _, err := v.Reset(ctx, envs.ResetRequest{})
		if err != nil {
			t.Fatal(err)
		}
		solveAll(t, v, obs)
		if _, _, err := v.Reset(ctx, envs.ResetRequest{}); err != nil {
			t.Fatal(err)
		}
		if v.MinLength(0) != tc.want || v.MinLength(tc.n-1) != tc.want {
			t.Errorf("n=%d perCopy=%v: min_length %d/%d, want %d", tc.n, tc.perCopy, v.MinLength(0), v.MinLength(tc.n-1), tc.want)
		}
		if !tc.perCopy && tc.n == 25 {
			// copies 0..9 drew from min_length 2, 10..19 from 3, 20..24 from 4: the curriculum is
			// updated copy by copy within one batch reset, as the shared gym class attribute was.
			for i := range tc.n {
				lo := 2 + (i+1)/10
				if w := v.InputWidth(i); w < lo || w > lo+2 {
					t.Errorf("copy %d: width %d, want in [%d, %d]", i, w, lo, lo+2)
				}
			}
		}
	}
}

func TestVecAutoresetDisabled(t *testing.T) {
	ctx := context.Background()
	v, err := NewVecEnv(Config{Task: Copy, Base: 5, Autoreset: envs.AutoresetDisabled}, 2)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = v.Reset(ctx, envs.ResetRequest{PerCopy: []map[string]any{{OptInput: []int64{1, 2}}, {OptInput: []int64{3, 4, 0}}}})
	if err != nil {
		t.Fatal(err)
	}
	act := envs.Array{DType: envs.Int64, Shape: []int{2}, Ints: []int64{1 + 2 + 4*4, 1 + 2 + 4*3}} // copy 0 wrong, copy 1 right
	res, err := v.Step(ctx, act)
	if err != nil || res.Rewards[0] != -0.5 || !res.Terminated[0] || res.Rewards[1] != 1 || res.Terminated[1] {
		t.Fatalf("step 1: %+v %v", res, err)
	}
	final := res.Obs.Ints[0]
	for range 3 {
		res, err = v.Step(ctx, act) // copy 0 is left alone; copy 1 fails (writes 3, wants 4) then stays
		if err != nil || res.Obs.Ints[0] != final || res.Rewards[0] != 0 || !res.Terminated[0] || res.Truncated[0] {
			t.Fatalf("ended copy: %+v %v", res, err)
		}
	}
	if !res.Terminated[1] || res.Rewards[1] != 0 || res.Obs.Ints[1] != 0 {
		t.Fatalf("copy 1: %+v", res)
	}
	// reset only copy 0 with a mask: copy 1 keeps its state and row
	obs, _, err := v.Reset(ctx, envs.ResetRequest{Mask: []bool{true, false}, PerCopy: []map[string]any{{OptInput: []int64{4}}, nil}})
	if err != nil || obs.Ints[0] != 4 || obs.Ints[1] != 0 {
		t.Fatalf("masked reset: %v %v", obs, err)
	}
	res, err = v.Step(ctx, envs.Array{DType: envs.Int64, Shape: []int{2}, Ints: []int64{1 + 2 + 16, 0}})
	if err != nil || res.Rewards[0] != 1 || !res.Terminated[0] || !res.Terminated[1] || res.Rewards[1] != 0 {
		t.Fatalf("after masked reset: %+v %v", res, err)
	}
}

func TestDeterminism(t *testing.T) {
	ctx := context.Background()
	run := func(seeds []int64) []int64 {
		v, err := NewVecEnv(Config{Task: RepeatCopy, Base: 7}, len(seeds))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := v.Reset(ctx, envs.ResetRequest{Seeds: seeds}); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(9, 9))
		act := envs.NewArray(envs.Int64, len(seeds))
		var trace []int64
		for range 200 {
			for i := range act.Ints {
				act.Ints[i] = rng.Int64N(4 * 7)
			}
			res, err := v.Step(ctx, act)
			if err != nil {
				t.Fatal(err)
			}
			trace = append(trace, res.Obs.Ints...)
			for i := range seeds {
				trace = append(trace, int64(v.TargetLength(i)))
			}
		}
		return trace
	}
	a, b, c := run([]int64{1, 2, 3}), run([]int64{1, 2, 3}), run([]int64{1, 2, 4})
	if !slices.Equal(a, b) {
		t.Error("same seeds gave different episodes")
	}
	if slices.Equal(a, c) {
		t.Error("different seeds gave the same episodes")
	}
	// the single Env and a VecEnv copy with the same seed draw the same inputs
	env := mustEnv(t, Reverse, 3)
	v, _ := NewVecEnv(Config{Task: Reverse, Base: 3}, 1)
	seed := int64(42)
	for k := range 5 {
		var s *int64
		var seeds []int64
		if k == 0 {
			s, seeds = &seed, []int64{seed}
		}
		o1, _, _ := env.Reset(s, nil)
		o2, _, _ := v.Reset(ctx, envs.ResetRequest{Seeds: seeds})
		if o1.(int64) != o2.Ints[0] || !slices.Equal(env.Target(), v.Target(0)) {
			t.Fatalf("reset %d: env %v %v, vec %v %v", k, o1, env.Target(), o2.Ints[0], v.Target(0))
		}
	}
}

func TestInvalidInputs(t *testing.T) {
	tests := []struct {
		task  Task
		base  int
		input any
		want  string
	}{
		{Copy, 5, []int64{1, 5}, "out of range"},
		{Copy, 5, []int64{-1}, "out of range"},
		{Copy, 5, []int64{}, "empty"},
		{Copy, 5, "123", "want a list"},
		{Copy, 5, []any{1, "x"}, "element 1"},
		{DuplicatedInput, 5, []int64{1, 1, 2}, "odd length"},
		{Reverse, 2, []int{0, 2}, "out of range"},
		{ReversedAddition, 3, [][]int64{{1, 2, 0}}, "3 rows, want 2"},
		{ReversedAddition3, 3, [][]int64{{1, 2}}, "2 rows, want 3"},
		{ReversedAddition, 3, [][]int64{{1, 3}}, "out of range"},
		{ReversedAddition, 3, [][]int64{}, "no columns"},
		{ReversedAddition, 3, []int64{1, 2}, "want a list of columns"},
	}
	for _, tc := range tests {
		env := mustEnv(t, tc.task, tc.base)
		_, _, err := env.Reset(nil, map[string]any{OptInput: tc.input})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v input %v: error %v, want one containing %q", tc.task, tc.input, err, tc.want)
		}
		v, _ := NewVecEnv(Config{Task: tc.task, Base: tc.base}, 3)
		_, _, err = v.Reset(context.Background(), envs.ResetRequest{PerCopy: []map[string]any{nil, {OptInput: tc.input}, nil}})
		if err == nil || !strings.Contains(err.Error(), "copy 1") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("vec %v input %v: error %v", tc.task, tc.input, err)
		}
		if _, err := v.Step(context.Background(), envs.NewArray(envs.Int64, 3)); err == nil {
			t.Errorf("%v: a failed first reset must leave the copies unreset", tc.task)
		}
	}
	if _, _, err := mustEnv(t, Copy, 5).Reset(nil, map[string]any{"inptu": []int64{1}}); err == nil || !strings.Contains(err.Error(), `"inptu"`) {
		t.Errorf("unknown reset option: %v", err)
	}
}

func TestInvalidActions(t *testing.T) {
	ctx := context.Background()
	env := mustEnv(t, Copy, 5)
	if _, _, _, _, _, err := env.Step(int64(0)); err == nil || !strings.Contains(err.Error(), "before reset") {
		t.Errorf("step before reset: %v", err)
	}
	env.Reset(nil, nil)
	for _, a := range []any{int64(-1), int64(20), 3, []any{int64(0), int64(0), int64(0)}} {
		if _, _, _, _, _, err := env.Step(a); err == nil {
			t.Errorf("action %v accepted", a)
		}
	}
	fenv, _ := NewEnv(Config{Task: ReversedAddition, Base: 3, FactoredActions: true})
	fenv.Reset(nil, nil)
	for _, a := range []any{int64(0), []any{int64(4), int64(0), int64(0)}, []any{int64(0), int64(2), int64(0)}, []any{int64(0), int64(1), int64(3)}} {
		if _, _, _, _, _, err := fenv.Step(a); err == nil {
			t.Errorf("factored action %v accepted", a)
		}
	}
	v, _ := NewVecEnv(Config{Task: Copy, Base: 5}, 2)
	if _, err := v.Step(ctx, envs.NewArray(envs.Int64, 2)); err == nil {
		t.Error("vec step before reset accepted")
	}
	v.Reset(ctx, envs.ResetRequest{})
	bad := []envs.Array{
		{DType: envs.Int64, Shape: []int{2}, Ints: []int64{0, 20}},
		{DType: envs.Int64, Shape: []int{2}, Ints: []int64{-1, 0}},
		{DType: envs.Int64, Shape: []int{3}, Ints: []int64{0, 0, 0}},
		{DType: envs.Float32, Shape: []int{2}, Floats: []float64{0, 0}},
		{DType: envs.Int64, Shape: []int{2, 3}, Ints: make([]int64, 6)},
	}
	for _, a := range bad {
		if _, err := v.Step(ctx, a); err == nil {
			t.Errorf("vec actions %+v accepted", a)
		}
	}
	fv, _ := NewVecEnv(Config{Task: Reverse, Base: 4, FactoredActions: true}, 2)
	fv.Reset(ctx, envs.ResetRequest{})
	if _, err := fv.Step(ctx, envs.Array{DType: envs.Int64, Shape: []int{2, 3}, Ints: []int64{0, 0, 0, 2, 0, 0}}); err == nil || !strings.Contains(err.Error(), "copy 1") {
		t.Errorf("factored vec move 2: %v", err)
	}
	if _, err := fv.Step(ctx, envs.Array{DType: envs.Int64, Shape: []int{2, 3}, Ints: []int64{1, 1, 3, 0, 0, 0}}); err != nil {
		t.Errorf("factored vec valid action: %v", err)
	}
}

func TestConfigAndRegistry(t *testing.T) {
	r := envs.NewRegistry()
	if err := Register(r); err != nil {
		t.Fatal(err)
	}
	want := []string{"Copy-v0", "DuplicatedInput-v0", "RepeatCopy-v0", "Reverse-v0", "ReversedAddition-v0", "ReversedAddition3-v0"}
	if !slices.Equal(r.IDs(), want) {
		t.Fatalf("ids %v", r.IDs())
	}
	sizes := []struct {
		id      string
		base    int
		actions int64
	}{
		{"Copy-v0", 5, 20}, {"Copy-v0", 40, 160}, {"DuplicatedInput-v0", 80, 320}, {"Reverse-v0", 32, 128},
		{"ReversedAddition-v0", 12, 96}, {"ReversedAddition3-v0", 3, 24}, {"RepeatCopy-v0", 0, 0},
	}
	for _, s := range sizes {
		opts := map[string]any{}
		if s.base != 0 {
			opts["base"] = s.base
		}
		env, err := r.Make(s.id, opts)
		if err != nil {
			t.Fatal(err)
		}
		if s.base == 0 {
			if env.ActionSpace().(envs.Discrete).N != 20 || env.ObservationSpace().(envs.Discrete).N != 6 {
				t.Errorf("%s default: %v %v", s.id, env.ActionSpace(), env.ObservationSpace())
			}
			continue
		}
		if env.ActionSpace().(envs.Discrete).N != s.actions || env.ObservationSpace().(envs.Discrete).N != int64(s.base+1) {
			t.Errorf("%s base %d: %v %v", s.id, s.base, env.ActionSpace(), env.ObservationSpace())
		}
	}
	v, err := r.MakeVec("ReversedAddition-v0", 4, map[string]any{"base": 5.0, "factored_actions": true, "autoreset": "disabled", "per_copy_curriculum": true})
	if err != nil {
		t.Fatal(err)
	}
	if v.AutoresetMode() != envs.AutoresetDisabled || v.ActionSpace().String() != "Tuple(Discrete(4), Discrete(2), Discrete(5))" {
		t.Errorf("vec: %v %v", v.AutoresetMode(), v.ActionSpace())
	}
	if f, ok := v.(envs.ActionFactors); !ok || !slices.Equal(f.ActionComponents(), []int64{4, 2, 5}) {
		t.Errorf("action components")
	}
	badOpts := []map[string]any{{"base": 1}, {"base": "5"}, {"base": 2.5}, {"bsae": 5}, {"autoreset": "sometimes"}, {"factored_actions": 1}}
	for _, o := range badOpts {
		if _, err := r.Make("Copy-v0", o); err == nil {
			t.Errorf("options %v accepted", o)
		}
	}
	if _, err := r.Make("Copy-v1", nil); err == nil || !strings.Contains(err.Error(), "Copy-v0") {
		t.Errorf("unknown id: %v", err)
	}
}

func TestRender(t *testing.T) {
	env := mustEnv(t, Copy, 5)
	env.Reset(nil, map[string]any{OptInput: []int64{0, 1, 2}})
	step(t, env, right, 1, 0)
	out := env.Render()
	for _, want := range []string{" A [B] C ", "Output  :  A ", "Target  :  A  B  C ", "move right, write A", "reward +1.0"} {
		if !strings.Contains(out, want) {
			t.Errorf("render lacks %q:\n%s", want, out)
		}
	}
	g := mustEnv(t, ReversedAddition, 40)
	g.Reset(nil, map[string]any{OptInput: [][]int64{{10, 39}, {0, 7}}})
	step(t, g, up, 0, 0)
	out = g.Render()
	if !strings.Contains(out, "[  ]") || !strings.Contains(out, "10") || !strings.Contains(out, "39") {
		t.Errorf("grid render:\n%s", out)
	}
}

func TestStepDoesNotAllocate(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []envs.AutoresetMode{envs.AutoresetNextStep, envs.AutoresetDisabled} {
		for _, factored := range []bool{false, true} {
			v, _ := NewVecEnv(Config{Task: RepeatCopy, Base: 5, Autoreset: mode, FactoredActions: factored}, 64)
			v.Reset(ctx, envs.ResetRequest{})
			rng := rand.New(rand.NewPCG(1, 1))
			acts := make([]envs.Array, 32)
			for k := range acts {
				acts[k] = envs.NewBatch(v.ActionSpace(), 64)
				for i := range 64 {
					if err := envs.WriteRow(v.ActionSpace(), acts[k], i, v.ActionSpace().Sample(rng)); err != nil {
						t.Fatal(err)
					}
				}
			}
			// warm up: buffers grow to the largest target once
			for k := range 200 {
				v.Step(ctx, acts[k%32])
			}
			k := 0
			allocs := testing.AllocsPerRun(200, func() {
				if _, err := v.Step(ctx, acts[k%32]); err != nil {
					t.Fatal(err)
				}
				k++
			})
			if allocs != 0 {
				t.Errorf("mode %v factored %v: %v allocs per Step", mode, factored, allocs)
			}
		}
	}
}
