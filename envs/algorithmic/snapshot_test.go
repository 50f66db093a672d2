package algorithmic

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/sparsepcl/sparsepcl/envs"
)

// A restored curriculum fed the same shortfalls as the original moves in lockstep with it, whether
// the snapshot was taken with an empty, partial or wrapped (full, blocked) window.
func TestCurriculumStateRoundTrip(t *testing.T) {
	perfect, fail := 0.0, -1.5
	tests := []struct {
		name         string
		task         Task
		before       []float64
		wantHeld     []float64
		wantMinLen   int
		continuation []float64
	}{
		{"fresh", Copy, nil, []float64{}, 2, slices.Repeat([]float64{perfect}, 10)},
		{"partial", Copy, []float64{perfect, -1, perfect}, []float64{perfect, -1, perfect}, 2, slices.Repeat([]float64{perfect}, 9)},
		{"wrapped with a failure", Copy, append([]float64{perfect, fail}, slices.Repeat([]float64{-0.5}, 9)...),
			append([]float64{fail}, slices.Repeat([]float64{-0.5}, 9)...), 2, slices.Repeat([]float64{perfect}, 12)},
		{"after a level-up", Copy, slices.Repeat([]float64{perfect}, 13), []float64{perfect, perfect, perfect}, 3, slices.Repeat([]float64{perfect}, 8)},
		{"at the cap", Copy, slices.Repeat([]float64{perfect}, 10*31), slices.Repeat([]float64{perfect}, 10), 30, []float64{fail, perfect}},
		{"Reverse window of 50", Reverse, slices.Repeat([]float64{-0.05}, 70), slices.Repeat([]float64{-0.05}, 20), 2, slices.Repeat([]float64{perfect}, 31)},
	}
	for _, tc := range tests {
		orig := newCurriculum(tc.task)
		for _, s := range tc.before {
			orig.record(s)
		}
		st := orig.State()
		if st.MinLength != tc.wantMinLen || !slices.Equal(st.Shortfalls, tc.wantHeld) {
			t.Errorf("%s: state %+v, want min_length %d shortfalls %v", tc.name, st, tc.wantMinLen, tc.wantHeld)
			continue
		}
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		var decoded CurriculumState
		if err := json.Unmarshal(b, &decoded); err != nil {
			t.Fatal(err)
		}
		restored := newCurriculum(tc.task)
		if err := restored.Restore(decoded); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for k, s := range tc.continuation {
			orig.record(s)
			restored.record(s)
			if orig.MinLength() != restored.MinLength() || orig.Recorded() != restored.Recorded() {
				t.Errorf("%s: after %d more: original (%d, %d), restored (%d, %d)", tc.name, k+1,
					orig.MinLength(), orig.Recorded(), restored.MinLength(), restored.Recorded())
				break
			}
		}
	}
}

func TestCurriculumRestoreRejects(t *testing.T) {
	tests := []struct {
		name string
		s    CurriculumState
	}{
		{"below the start", CurriculumState{MinLength: 1}},
		{"above the cap", CurriculumState{MinLength: MaxMinLength + 1}},
		{"more than the window", CurriculumState{MinLength: 2, Shortfalls: make([]float64, 11)}},
		{"NaN shortfall", CurriculumState{MinLength: 2, Shortfalls: []float64{math.NaN()}}},
		{"Inf shortfall", CurriculumState{MinLength: 2, Shortfalls: []float64{math.Inf(-1)}}},
		{"full passing window below the cap", CurriculumState{MinLength: 5, Shortfalls: make([]float64, 10)}},
	}
	for _, tc := range tests {
		c := newCurriculum(Copy)
		c.record(-3)
		before := c.State()
		if err := c.Restore(tc.s); err == nil {
			t.Errorf("%s: accepted %+v", tc.name, tc.s)
		}
		if after := c.State(); after.MinLength != before.MinLength || !slices.Equal(after.Shortfalls, before.Shortfalls) {
			t.Errorf("%s: a rejected restore changed the curriculum: %+v -> %+v", tc.name, before, after)
		}
	}
}

// playMixed plays every copy of v to its end: copies with fail(i) never write (a failing
// shortfall), the others play the optimal policy (a perfect one).
func playMixed(t *testing.T, v *VecEnv, obs envs.Array, fail func(i int) bool) {
	t.Helper()
	n := v.NumEnvs()
	pol := make([]scripted, n)
	for i := range pol {
		pol[i] = scripted{task: v.Task(), base: int64(v.Base())}
	}
	done := make([]bool, n)
	act := envs.NewArray(envs.Int64, n)
	cur := slices.Clone(obs.Ints)
	for slices.Contains(done, false) {
		for i := range pol {
			act.Ints[i] = right // move right, no write
			if !done[i] && !fail(i) {
				m, w, c := pol[i].act(cur[i])
				act.Ints[i] = m + v.c.moves*w + 2*v.c.moves*c
			}
		}
		res, err := v.Step(context.Background(), act)
		if err != nil {
			t.Fatal(err)
		}
		copy(cur, res.Obs.Ints)
		for i := range done {
			done[i] = done[i] || res.Terminated[i]
		}
	}
}

// A VecEnv restored from a snapshot (through JSON, as in a checkpoint) into a fresh env continues
// exactly like the original: same min_length per copy, same inputs, across level-ups, for the
// shared and the per-copy curriculum. Without the pending shortfalls the shared case levels up
// one batch late, so the test also checks that a snapshot lacking them diverges.
func TestVecCurriculumRestoreContinuesExactly(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		n       int
		perCopy bool
		before  int // batches played before the snapshot
		after   int
	}{
		{7, false, 0, 6}, {7, false, 1, 6}, {7, false, 3, 6}, {5, true, 6, 30}, {1, false, 12, 25},
	}
	// copy 1 fails every fifth batch; every other episode is perfect
	fails := func(b int) func(int) bool { return func(i int) bool { return i == 1 && b%5 == 0 } }
	levels := func(v *VecEnv) (sum int) {
		for i := range v.NumEnvs() {
			sum += v.MinLength(i)
		}
		return sum
	}
	for _, tc := range tests {
		cfg := Config{Task: Copy, Base: 3, Autoreset: envs.AutoresetDisabled, PerCopyCurriculum: tc.perCopy}
		orig, err := NewVecEnv(cfg, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		seeds := func(b int) envs.ResetRequest {
			r := envs.ResetRequest{Seeds: make([]int64, tc.n)}
			for i := range r.Seeds {
				r.Seeds[i] = int64(1000*b + i)
			}
			return r
		}
		for b := range tc.before {
			obs, _, err := orig.Reset(ctx, seeds(b))
			if err != nil {
				t.Fatal(err)
			}
			playMixed(t, orig, obs, fails(b))
		}
		levelsAtSnapshot := levels(orig)
		raw, err := json.Marshal(orig.CurriculumState())
		if err != nil {
			t.Fatal(err)
		}
		var snap VecCurriculumState
		if err := json.Unmarshal(raw, &snap); err != nil {
			t.Fatal(err)
		}
		restored, err := NewVecEnv(cfg, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		if err := restored.RestoreCurriculum(snap); err != nil {
			t.Fatalf("n=%d perCopy=%v: %v", tc.n, tc.perCopy, err)
		}
		noPending, err := NewVecEnv(cfg, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		snap.Pending = make([]*float64, tc.n)
		if err := noPending.RestoreCurriculum(snap); err != nil {
			t.Fatal(err)
		}
		diverged := false
		for b := tc.before; b < tc.before+tc.after; b++ {
			for k, v := range []*VecEnv{orig, restored, noPending} {
				obs, _, err := v.Reset(ctx, seeds(b))
				if err != nil {
					t.Fatal(err)
				}
				for i := range tc.n {
					if k == 1 && (v.MinLength(i) != orig.MinLength(i) || !slices.Equal(v.Target(i), orig.Target(i))) {
						t.Fatalf("n=%d perCopy=%v batch %d copy %d: restored min_length %d target %v, original %d %v",
							tc.n, tc.perCopy, b, i, v.MinLength(i), v.Target(i), orig.MinLength(i), orig.Target(i))
					}
					if k == 2 && v.MinLength(i) != orig.MinLength(i) {
						diverged = true
					}
				}
				playMixed(t, v, obs, fails(b))
			}
		}
		if levels(orig) <= levelsAtSnapshot {
			t.Errorf("n=%d perCopy=%v: no level-up after the snapshot: the test does not cross one", tc.n, tc.perCopy)
		}
		if tc.before > 0 && !diverged {
			t.Errorf("n=%d perCopy=%v: dropping the pending shortfalls did not change the curriculum: the test does not exercise them", tc.n, tc.perCopy)
		}
	}
}

func TestVecCurriculumRestoreRejects(t *testing.T) {
	shared, err := NewVecEnv(Config{Task: Copy, Base: 3, Autoreset: envs.AutoresetDisabled}, 3)
	if err != nil {
		t.Fatal(err)
	}
	perCopy, err := NewVecEnv(Config{Task: Copy, Base: 3, Autoreset: envs.AutoresetDisabled, PerCopyCurriculum: true}, 3)
	if err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	good := shared.CurriculumState()
	tests := []struct {
		name string
		s    VecCurriculumState
	}{
		{"per-copy snapshot into a shared env", perCopy.CurriculumState()},
		{"wrong pending count", VecCurriculumState{Curricula: good.Curricula, Pending: make([]*float64, 2)}},
		{"wrong curricula count", VecCurriculumState{Curricula: nil, Pending: good.Pending}},
		{"bad curriculum", VecCurriculumState{Curricula: []CurriculumState{{MinLength: 0}}, Pending: good.Pending}},
		{"NaN pending", VecCurriculumState{Curricula: good.Curricula, Pending: []*float64{nil, &nan, nil}}},
	}
	for _, tc := range tests {
		if err := shared.RestoreCurriculum(tc.s); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	if err := shared.RestoreCurriculum(good); err != nil {
		t.Errorf("own snapshot rejected: %v", err)
	}
}
