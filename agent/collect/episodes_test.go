package collect_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/collect"
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/episode"
	"github.com/sparsepcl/sparsepcl/agent/model/lstm"
	"github.com/sparsepcl/sparsepcl/agent/policy"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/registry"
	"github.com/sparsepcl/sparsepcl/envs/wrappers"
)

// task is a Go-native environment the sampler runs on.
type task struct {
	id   string
	base int
}

func (tk task) options(extra map[string]any) map[string]any {
	o := map[string]any{"base": tk.base, "autoreset": "disabled"}
	for k, v := range extra {
		o[k] = v
	}
	return o
}

// newVecEnv builds n copies of tk with autoreset disabled, as the trainer does.
func newVecEnv(t *testing.T, tk task, n int) envs.VecEnv {
	t.Helper()
	env, err := registry.MakeVec(tk.id, n, tk.options(nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Close() })
	return env
}

// newModel builds a small, freshly initialised model for env, with its parameters scaled up by
// sharpen so that the policy is far from uniform (greedy choices are then clear-cut and sparsemax
// has a small support).
func newModel(t *testing.T, env envs.VecEnv, algo config.Algo, form config.Form, seed int64, sharpen float32) *lstm.Model {
	t.Helper()
	spec, err := lstm.SpecOf(env)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Algo, cfg.Form, cfg.Hidden, cfg.Seed, cfg.Alpha, cfg.TsallisQ = algo, form, 16, seed, 0.5, 1.5
	m, err := lstm.New(cfg, spec, tensor.GonumEngine())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Net.Params() {
		for i := range p.Value.Data {
			p.Value.Data[i] *= sharpen
		}
	}
	return m
}

// newCollector is the collector of the LSTM's episodes, as the trainer builds it.
func newCollector(env envs.VecEnv, m *lstm.Model, maxSteps int) (*collect.Collector[int32], error) {
	actor, err := m.NewActor(env)
	if err != nil {
		return nil, err
	}
	return collect.New[int32](env, lstm.TokenEncoder{N: m.Spec.ObsVocab}, actor, collect.Options{MaxSteps: maxSteps})
}

func newSampler(t *testing.T, env envs.VecEnv, m *lstm.Model, maxSteps int) *collect.Collector[int32] {
	t.Helper()
	s, err := newCollector(env, m, maxSteps)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// mode is the collector's mode of a greedy flag.
func mode(greedy bool) collect.Mode {
	if greedy {
		return collect.Greedy
	}
	return collect.Sample
}

func rng(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 7)) }

// policyAlong recomputes the model's logits and policy at every step of eps on the learner's code
// path: one batched Forward over tokens laid out as pcl.Learner lays them out (observation s_t and
// the previous action a_{t-1}, "none" at t = 0). It returns z[b][t] and p[b][t] for t < L.
func policyAlong(t *testing.T, m *lstm.Model, eps []*episode.Episode) (zs, ps [][][]float32) {
	t.Helper()
	spec := m.Spec
	F, K, B := spec.Features(), spec.NumActions(), len(eps)
	T := 0
	for _, e := range eps {
		T = max(T, e.Len()+1)
	}
	tokens := make([]int32, T*B*F)
	lengths := make([]int, B)
	for b, e := range eps {
		lengths[b] = e.Len() + 1
		for s := 0; s <= e.Len(); s++ {
			row := tokens[(s*B+b)*F : (s*B+b+1)*F]
			row[0] = e.Obs[s]
			prev := -1
			if s > 0 {
				prev = int(e.Actions[s-1])
			}
			spec.PrevActionTokens(row[1:], prev)
		}
	}
	heads, err := m.Net.Forward(tokens, T, B, lengths)
	if err != nil {
		t.Fatal(err)
	}
	zs, ps = make([][][]float32, B), make([][][]float32, B)
	for b, e := range eps {
		for s := 0; s < e.Len(); s++ {
			z, p := make([]float32, K), make([]float32, K)
			m.Probs(p, z, heads[0].Row(s*B+b))
			zs[b], ps[b] = append(zs[b], z), append(ps[b], p)
		}
	}
	return zs, ps
}

// replay plays episode e again on a fresh single copy of tk reset with seed, and checks that every
// observation, reward and end flag the sampler stored is what the environment gives.
func replay(t *testing.T, tk task, seed int64, e *episode.Episode, maxSteps int) {
	t.Helper()
	env, err := registry.Make(tk.id, map[string]any{"base": tk.base})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	obs, _, err := env.Reset(&seed, nil)
	if err != nil {
		t.Fatal(err)
	}
	if int32(obs.(int64)) != e.Obs[0] {
		t.Fatalf("seed %d: first observation %d, env gives %d", seed, e.Obs[0], obs)
	}
	total := 0.0
	for s, a := range e.Actions {
		o, r, term, trunc, _, err := env.Step(int64(a))
		if err != nil {
			t.Fatalf("seed %d step %d: %v", seed, s, err)
		}
		total += r
		if int32(o.(int64)) != e.Obs[s+1] || r != e.Rewards[s] {
			t.Fatalf("seed %d step %d: stored obs %d reward %v, env gives %d %v", seed, s, e.Obs[s+1], e.Rewards[s], o, r)
		}
		last := s == e.Len()-1
		if ended := term || trunc; ended != last && !(last && !e.Terminated) {
			t.Fatalf("seed %d step %d of %d: env ended = %v", seed, s, e.Len(), ended)
		}
		if last {
			if e.Terminated != term {
				t.Fatalf("seed %d: stored terminated = %v, env says %v at the last step", seed, e.Terminated, term)
			}
			if e.Truncated == e.Terminated {
				t.Fatalf("seed %d: a whole episode is terminated (%v) or truncated (%v)", seed, e.Terminated, e.Truncated)
			}
			if !e.Terminated && e.Len() != maxSteps {
				t.Fatalf("seed %d: truncated after %d steps, max steps %d", seed, e.Len(), maxSteps)
			}
		}
	}
	if got := e.TotalReward(); got != total {
		t.Fatalf("seed %d: episode reward %v, env paid %v", seed, got, total)
	}
}

// Every batch holds one well-formed episode per copy whose steps are exactly what the environment
// did; terminated/truncated follow the env and MaxSteps; the result's counters add up.
func TestSampleEpisodesMatchTheEnvironment(t *testing.T) {
	tests := []struct {
		name     string
		task     task
		algo     config.Algo
		form     config.Form
		greedy   bool
		maxSteps int
	}{
		{"copy sparse stochastic", task{"Copy-v0", 2}, config.AlgoSparse, config.FormSeparate, false, 200},
		{"copy soft greedy", task{"Copy-v0", 3}, config.AlgoSoft, config.FormUnified, true, 200},
		{"reverse tsallis stochastic", task{"Reverse-v0", 3}, config.AlgoTsallis, config.FormSeparate, false, 200},
		{"repeat copy sparse unified greedy", task{"RepeatCopy-v0", 2}, config.AlgoSparse, config.FormUnified, true, 200},
		{"duplicated input soft stochastic", task{"DuplicatedInput-v0", 2}, config.AlgoSoft, config.FormSeparate, false, 200},
		{"reversed addition sparse stochastic", task{"ReversedAddition-v0", 3}, config.AlgoSparse, config.FormSeparate, false, 200},
		{"truncated at 1 step", task{"Copy-v0", 2}, config.AlgoSparse, config.FormSeparate, false, 1},
		{"truncated at 3 steps, greedy", task{"Reverse-v0", 2}, config.AlgoSoft, config.FormSeparate, true, 3},
		{"truncated at 4 steps, stochastic", task{"RepeatCopy-v0", 2}, config.AlgoSoft, config.FormSeparate, false, 4},
	}
	const n, seedBase, iteration = 16, 1000, 7
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newVecEnv(t, tc.task, n)
			m := newModel(t, env, tc.algo, tc.form, 3, 1)
			res, err := newSampler(t, env, m, tc.maxSteps).Episodes(context.Background(), rng(1), mode(tc.greedy), iteration, seedBase)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Trajectories) != n {
				t.Fatalf("%d episodes for %d copies", len(res.Trajectories), n)
			}
			steps, sum, terminated := 0, 0.0, 0
			for i, e := range res.Trajectories {
				if err := e.Validate(episode.TokenDim); err != nil {
					t.Fatalf("episode %d: %v", i, err)
				}
				if e.Len() > tc.maxSteps {
					t.Fatalf("episode %d has %d steps, max %d", i, e.Len(), tc.maxSteps)
				}
				if e.Iteration != iteration {
					t.Fatalf("episode %d tagged iteration %d, want %d", i, e.Iteration, iteration)
				}
				replay(t, tc.task, seedBase+int64(i), e, tc.maxSteps)
				steps += e.Len()
				sum += e.TotalReward()
				if e.Terminated {
					terminated++
				}
			}
			drawn := steps // greedy steps draw nothing, so the policy statistics skip them
			if tc.greedy {
				drawn = 0
			}
			if res.EnvSteps != steps || res.Stats.Steps != drawn {
				t.Errorf("EnvSteps %d, Stats.Steps %d, episodes hold %d steps (%d drawn)", res.EnvSteps, res.Stats.Steps, steps, drawn)
			}
			if want := sum / n; math.Abs(res.MeanReturn()-want) > 1e-12 {
				t.Errorf("MeanReward %v, episodes average %v", res.MeanReturn(), want)
			}
			// Every algorithmic episode ends by termination within its time limit (well under 200
			// steps at the first curriculum level); a cap of a few steps cuts some of the random
			// walks a stochastic policy makes (a greedy one may write, and end, at once everywhere).
			switch {
			case tc.maxSteps == 200 && terminated != n:
				t.Errorf("%d of %d episodes terminated with a 200-step cap", terminated, n)
			case tc.maxSteps <= 4 && !tc.greedy && terminated == n:
				t.Errorf("no episode truncated with a %d-step cap", tc.maxSteps)
			}
			t.Logf("%d of %d terminated, %d steps", terminated, n, steps)
		})
	}
}

// The sampler's policy at every step is the one the learner computes for the stored episode, so the
// stored observations and previous actions follow the learner's convention; greedy sampling takes
// the arg max of that policy and stochastic sampling never leaves its support.
func TestSampledActionsFollowTheLearnersPolicy(t *testing.T) {
	tests := []struct {
		name   string
		task   task
		algo   config.Algo
		form   config.Form
		greedy bool
	}{
		{"sparse greedy", task{"Copy-v0", 3}, config.AlgoSparse, config.FormSeparate, true},
		{"sparse stochastic", task{"Copy-v0", 3}, config.AlgoSparse, config.FormSeparate, false},
		{"soft unified greedy", task{"Reverse-v0", 2}, config.AlgoSoft, config.FormUnified, true},
		{"tsallis stochastic", task{"RepeatCopy-v0", 2}, config.AlgoTsallis, config.FormSeparate, false},
		{"sparse unified greedy", task{"DuplicatedInput-v0", 3}, config.AlgoSparse, config.FormUnified, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newVecEnv(t, tc.task, 24)
			m := newModel(t, env, tc.algo, tc.form, 11, 6)
			res, err := newSampler(t, env, m, 200).Episodes(context.Background(), rng(5), mode(tc.greedy), 0, 40)
			if err != nil {
				t.Fatal(err)
			}
			zs, ps := policyAlong(t, m, res.Trajectories)
			var maxProbSum float64
			clear, zeroSupport := 0, 0
			for b, e := range res.Trajectories {
				for s, a := range e.Actions {
					z, p := zs[b][s], ps[b][s]
					best, second := topTwo(z)
					maxProbSum += float64(p[best])
					if p[a] == 0 {
						zeroSupport++
						t.Errorf("episode %d step %d: action %d has probability 0 (policy %v)", b, s, a, p)
					}
					if !tc.greedy {
						continue
					}
					// Batched and single-step float32 paths may differ in the last bits: only a
					// clear-cut arg max is checked.
					if z[best]-z[second] < 1e-4 {
						continue
					}
					clear++
					if int(a) != best {
						t.Errorf("episode %d step %d: greedy took action %d (z %v), arg max is %d (z %v)", b, s, a, z[a], best, z[best])
					}
				}
			}
			if tc.greedy && clear < res.EnvSteps/2 {
				t.Errorf("only %d of %d greedy steps had a clear arg max: the test checks too little", clear, res.EnvSteps)
			}
			if tc.greedy {
				return
			}
			if d := math.Abs(res.Stats.MaxProbSum - maxProbSum); d > 1e-4*float64(res.EnvSteps) {
				t.Errorf("sampler's summed max probability %v, learner's policy gives %v", res.Stats.MaxProbSum, maxProbSum)
			}
			t.Logf("%d steps, mean support %.2f, mean max prob %.3f", res.EnvSteps, res.Stats.MeanSupport(), res.Stats.MeanMaxProb())
		})
	}
}

func topTwo(z []float32) (best, second int) {
	best, second = 0, -1
	for i := 1; i < len(z); i++ {
		switch {
		case z[i] > z[best]:
			best, second = i, best
		case second < 0 || z[i] > z[second]:
			second = i
		}
	}
	return best, second
}

// Stochastic first actions are drawn from the policy: over many copies that see the same first
// observation (and so the same policy), each action's frequency is within 5 standard deviations
// of its probability.
func TestStochasticActionsHaveThePolicysFrequencies(t *testing.T) {
	const n = 2000
	tk := task{"Copy-v0", 2}
	env := newVecEnv(t, tk, n)
	for _, algo := range []config.Algo{config.AlgoSoft, config.AlgoSparse} {
		t.Run(string(algo), func(t *testing.T) {
			m := newModel(t, env, algo, config.FormSeparate, 2, 3)
			res, err := newSampler(t, env, m, 1).Episodes(context.Background(), rng(9), mode(false), 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			checkFirstActionFrequencies(t, m, res.Trajectories, 200, func(p float64, _ int) float64 { return p })
		})
	}
}

// checkFirstActionFrequencies groups the episodes by their first observation (the copies that see
// one see the same policy) and, for each seen at least minTotal times, checks that every action's
// frequency as first action is within 5 standard deviations of want(π(a), |A|).
func checkFirstActionFrequencies(t *testing.T, m *lstm.Model, eps []*episode.Episode, minTotal int, want func(p float64, K int) float64) {
	t.Helper()
	_, ps := policyAlong(t, m, eps)
	K := m.Spec.NumActions()
	counts, policies := map[int32][]int{}, map[int32][]float32{}
	for b, e := range eps {
		o := e.Obs[0]
		if counts[o] == nil {
			counts[o], policies[o] = make([]int, K), ps[b][0]
		}
		counts[o][e.Actions[0]]++
	}
	for o, c := range counts {
		total := 0
		for _, v := range c {
			total += v
		}
		if total < minTotal {
			continue
		}
		for a, v := range c {
			p := want(float64(policies[o][a]), K)
			sd := math.Sqrt(p*(1-p)/float64(total)) + 1e-9
			if f := float64(v) / float64(total); math.Abs(f-p) > 5*sd {
				t.Errorf("first observation %d: action %d drawn %.3f of %d times, probability %.3f", o, a, f, total, p)
			}
		}
	}
}

// A batch is a function of the model, seedBase and rng (and, greedy, not even of rng): the same
// inputs on fresh environments give identical batches, call after call; other seeds give others.
// A Tuple-action env combined with wrappers.CombineVecActions gives the same batches as the
// natively combined one (same mixed-radix index).
func TestSampleIsDeterministic(t *testing.T) {
	tk := task{"Copy-v0", 3}
	type setup struct {
		factored bool
		rngSeed  uint64
		seedBase int64
	}
	run := func(t *testing.T, greedy bool, su setup) []collect.Batch[int32] {
		var env envs.VecEnv
		if su.factored {
			raw, err := registry.MakeVec(tk.id, 12, tk.options(map[string]any{"factored_actions": true}))
			if err != nil {
				t.Fatal(err)
			}
			if env, err = wrappers.CombineVecActions(raw); err != nil {
				t.Fatal(err)
			}
		} else {
			env = newVecEnv(t, tk, 12)
		}
		m := newModel(t, env, config.AlgoSparse, config.FormSeparate, 4, 2)
		s := newSampler(t, env, m, 50)
		r := rng(su.rngSeed)
		var out []collect.Batch[int32]
		for it := range 3 {
			res, err := s.Episodes(context.Background(), r, mode(greedy), it, su.seedBase+int64(100*it))
			if err != nil {
				t.Fatal(err)
			}
			res.EnvSeconds, res.PolicySeconds = 0, 0 // wall times, not outcomes
			out = append(out, res)
		}
		return out
	}
	tests := []struct {
		name   string
		greedy bool
		a, b   setup
		same   bool
	}{
		{"stochastic, same seeds", false, setup{false, 1, 10}, setup{false, 1, 10}, true},
		{"stochastic, combined tuple actions", false, setup{false, 1, 10}, setup{true, 1, 10}, true},
		{"stochastic, other rng", false, setup{false, 1, 10}, setup{false, 2, 10}, false},
		{"stochastic, other seed base", false, setup{false, 1, 10}, setup{false, 1, 11}, false},
		{"greedy ignores rng", true, setup{false, 1, 10}, setup{false, 2, 10}, true},
		{"greedy, other seed base", true, setup{false, 1, 10}, setup{false, 1, 500}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := run(t, tc.greedy, tc.a), run(t, tc.greedy, tc.b)
			if same := reflect.DeepEqual(a, b); same != tc.same {
				t.Fatalf("batches equal = %v, want %v", same, tc.same)
			}
		})
	}
}

func TestSampleHonoursContext(t *testing.T) {
	env := newVecEnv(t, task{"Copy-v0", 2}, 4)
	s := newSampler(t, env, newModel(t, env, config.AlgoSoft, config.FormSeparate, 1, 1), 10)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Episodes(ctx, rng(1), mode(false), 0, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want one wrapping context.Canceled", err)
	}
}

// respaced is a real algorithmic VecEnv that hides its action components (it has no
// envs.ActionFactors), so the LSTM reads its actions as one component.
type respaced struct{ envs.VecEnv }

func TestNewRefusesMismatches(t *testing.T) {
	env := newVecEnv(t, task{"Copy-v0", 3}, 2)
	m := newModel(t, env, config.AlgoSparse, config.FormSeparate, 1, 1)
	other := newModel(t, newVecEnv(t, task{"Copy-v0", 2}, 2), config.AlgoSparse, config.FormSeparate, 1, 1)
	nextStep, err := registry.MakeVec("Copy-v0", 2, map[string]any{"base": 3})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		env      envs.VecEnv
		model    *lstm.Model
		maxSteps int
		wantErr  string
	}{
		{"negative max steps", env, m, -3, "max steps -3"},
		{"model of another base", env, other, 10, "env has 4 observations and action components [2 2 3], the model 3 and [2 2 2]"},
		{"env that autoresets", nextStep, m, 10, "autoreset mode"},
		{"model of other action components", respaced{VecEnv: env}, m, 10, "env has 4 observations and action components [12], the model 4 and [2 2 3]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newCollector(tc.env, tc.model, tc.maxSteps)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
			}
		})
	}
}

// With SetExplore(ε), a drawn first action follows the mixture (1 − ε)·π + ε/|A|: each action's
// frequency over many copies that see the same first observation is within 5 standard deviations
// of its mixture probability, and about ε of the steps are counted as explored. Greedy sampling
// ignores ε, and out-of-range values are refused.
func TestExploreMixesUniformActions(t *testing.T) {
	const n, explore = 4000, 0.3
	tk := task{"Copy-v0", 2}
	env := newVecEnv(t, tk, n)
	for _, algo := range []config.Algo{config.AlgoSparse, config.AlgoSoft} {
		t.Run(string(algo), func(t *testing.T) {
			m := newModel(t, env, algo, config.FormSeparate, 2, 6)
			s := newSampler(t, env, m, 1)
			if err := s.SetExplore(explore, 0); err != nil {
				t.Fatal(err)
			}
			res, err := s.Episodes(context.Background(), rng(9), mode(false), 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if sd := math.Sqrt(explore * (1 - explore) * n); math.Abs(float64(res.Explored)-explore*n) > 5*sd {
				t.Errorf("%d of %d steps explored, want about %v", res.Explored, n, explore*n)
			}
			_, ps := policyAlong(t, m, res.Trajectories)
			offSupport := 0
			for b, e := range res.Trajectories {
				if ps[b][0][e.Actions[0]] == 0 {
					offSupport++
				}
			}
			if algo == config.AlgoSparse && offSupport == 0 {
				t.Errorf("no explored step left the sparse policy's support: the test checks too little")
			}
			checkFirstActionFrequencies(t, m, res.Trajectories, 500, func(p float64, K int) float64 { return (1-explore)*p + explore/float64(K) })
			greedy, err := s.Episodes(context.Background(), rng(9), mode(true), 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if greedy.Explored != 0 {
				t.Errorf("greedy sampling explored %d steps", greedy.Explored)
			}
		})
	}
	s := newSampler(t, env, newModel(t, env, config.AlgoSparse, config.FormSeparate, 2, 1), 1)
	for _, bad := range [][2]float64{{-0.1, 0}, {1, 0}, {math.NaN(), 0}, {0.1, -0.5}, {0.1, 1.5}, {0.1, math.NaN()}} {
		if err := s.SetExplore(bad[0], bad[1]); err == nil {
			t.Errorf("SetExplore(%v, %v) accepted", bad[0], bad[1])
		}
	}
}

// With a share, only the first ⌈share·n⌉ copies explore: the others take only actions in the
// sparse policy's support, and the explored count is about ε times the exploring copies' steps.
func TestExploreShareLeavesTheOtherCopiesOnPolicy(t *testing.T) {
	const n, explore, share = 4000, 0.5, 0.25
	env := newVecEnv(t, task{"Copy-v0", 2}, n)
	m := newModel(t, env, config.AlgoSparse, config.FormSeparate, 2, 6)
	s := newSampler(t, env, m, 1)
	if err := s.SetExplore(explore, share); err != nil {
		t.Fatal(err)
	}
	res, err := s.Episodes(context.Background(), rng(3), mode(false), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	exploring := int(share * n)
	if sd := math.Sqrt(explore * (1 - explore) * float64(exploring)); math.Abs(float64(res.Explored)-explore*float64(exploring)) > 5*sd {
		t.Errorf("%d steps explored, want about %v", res.Explored, explore*float64(exploring))
	}
	_, ps := policyAlong(t, m, res.Trajectories)
	offFirst, offRest := 0, 0
	for b, e := range res.Trajectories {
		if ps[b][0][e.Actions[0]] > 0 {
			continue
		}
		if b < exploring {
			offFirst++
		} else {
			offRest++
		}
	}
	if offFirst == 0 || offRest != 0 {
		t.Errorf("actions off the support: %d in the exploring copies (want some), %d in the others (want none)", offFirst, offRest)
	}
}

// With SetExploreTemperature(T), an exploring first action is drawn from softmax(z/T) of the
// logits: each action's frequency over the copies that see the same first observation is within 5
// standard deviations of (1 − ε)·π + ε·softmax(z/T), and at least one action is far (over 5 sd)
// from the uniform mixture, so the check tells the two apart. Bad temperatures are refused.
func TestExploreTemperatureDrawsByTheLogits(t *testing.T) {
	const n, explore, temp = 4000, 0.5, 0.5
	env := newVecEnv(t, task{"Copy-v0", 2}, n)
	m := newModel(t, env, config.AlgoSparse, config.FormSeparate, 2, 6)
	s := newSampler(t, env, m, 1)
	if err := s.SetExplore(explore, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.SetExploreTemperature(temp); err != nil {
		t.Fatal(err)
	}
	res, err := s.Episodes(context.Background(), rng(5), mode(false), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	zs, ps := policyAlong(t, m, res.Trajectories)
	K := m.Spec.NumActions()
	type group struct {
		counts []int
		z, p   []float32
	}
	groups := map[int32]*group{}
	for b, e := range res.Trajectories {
		g := groups[e.Obs[0]]
		if g == nil {
			g = &group{counts: make([]int, K), z: zs[b][0], p: ps[b][0]}
			groups[e.Obs[0]] = g
		}
		g.counts[e.Actions[0]]++
	}
	apart := false
	for o, g := range groups {
		total := 0
		for _, c := range g.counts {
			total += c
		}
		if total < 500 {
			continue
		}
		q := make([]float32, K)
		policy.SampleSoftmaxWithUniform(q, g.z, temp, 0)
		for a, c := range g.counts {
			f := float64(c) / float64(total)
			want := (1-explore)*float64(g.p[a]) + explore*float64(q[a])
			sd := math.Sqrt(want*(1-want)/float64(total)) + 1e-9
			if math.Abs(f-want) > 5*sd {
				t.Errorf("first observation %d: action %d drawn %.3f of %d times, want %.3f", o, a, f, total, want)
			}
			uniform := (1-explore)*float64(g.p[a]) + explore/float64(K)
			if math.Abs(f-uniform) > 5*math.Sqrt(uniform*(1-uniform)/float64(total)+1e-12) {
				apart = true
			}
		}
	}
	if !apart {
		t.Error("the frequencies fit a uniform exploration as well: the check sees too little")
	}
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
		if err := s.SetExploreTemperature(bad); err == nil {
			t.Errorf("SetExploreTemperature(%v) accepted", bad)
		}
	}
}

// Segments carries the LSTM's recurrent state and previous action across its cuts: an episode
// collected in pieces of 3 steps is the episode collected in one piece, step for step (with one
// copy, both draw the same random numbers in the same order).
func TestSegmentsCarryTheRecurrentStateAcrossCuts(t *testing.T) {
	tk := task{"Copy-v0", 3}
	crossed := 0
	for seed := range int64(6) {
		first := func(steps, calls int) []*episode.Episode {
			env := newVecEnv(t, tk, 1)
			m := newModel(t, env, config.AlgoSoft, config.FormSeparate, seed, 3)
			actor, err := m.NewActor(env)
			if err != nil {
				t.Fatal(err)
			}
			c, err := collect.New[int32](env, lstm.TokenEncoder{N: m.Spec.ObsVocab}, actor, collect.Options{Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			r := rng(uint64(seed))
			var pieces []*episode.Episode
			for it := range calls {
				b, err := c.Segments(context.Background(), r, steps, it)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range b.Trajectories {
					pieces = append(pieces, s)
					if s.Terminated || s.Truncated {
						return pieces
					}
				}
			}
			t.Fatalf("seed %d: no episode ended in %d steps", seed, steps*calls)
			return nil
		}
		whole, cut := first(60, 1), first(3, 20)
		if len(whole) != 1 {
			t.Fatalf("seed %d: the first episode came in %d pieces from one call", seed, len(whole))
		}
		joined := &episode.Episode{Obs: cut[0].Obs[:1]}
		for _, s := range cut {
			joined.Obs = append(joined.Obs, s.Obs[1:]...)
			joined.Actions = append(joined.Actions, s.Actions...)
			joined.Rewards = append(joined.Rewards, s.Rewards...)
		}
		w := whole[0]
		if !reflect.DeepEqual(joined.Obs, w.Obs) || !reflect.DeepEqual(joined.Actions, w.Actions) || !reflect.DeepEqual(joined.Rewards, w.Rewards) {
			t.Errorf("seed %d: the episode cut into %d pieces differs from the whole one:\n cut   %v\n whole %v", seed, len(cut), joined.Actions, w.Actions)
		}
		if len(cut) > 1 {
			crossed++
		}
	}
	if crossed == 0 {
		t.Fatal("no first episode crossed a cut: the test checks nothing")
	}
}
