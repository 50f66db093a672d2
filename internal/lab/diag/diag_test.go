package diag

import (
	"context"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/episode"
	"github.com/sparsepcl/sparsepcl/agent/model/lstm"
	"github.com/sparsepcl/sparsepcl/agent/replay"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

func TestTaskEncodingMatchesEnv(t *testing.T) {
	for _, task := range []algorithmic.Task{algorithmic.Copy, algorithmic.ReversedAddition} {
		env, err := algorithmic.NewEnv(algorithmic.Config{Task: task, Base: 3})
		if err != nil {
			t.Fatal(err)
		}
		comps := env.ActionComponents()
		tk := Task{Moves: int(comps[0]), Base: int(comps[2])}
		for m := range tk.Moves {
			for w := range 2 {
				for c := range tk.Base {
					a, err := env.Combine(int64(m), int64(w), int64(c))
					if err != nil {
						t.Fatal(err)
					}
					gw, gc := tk.Write(int(a))
					if int(a) != tk.Action(m, w, c) || gw != (w == 1) || (w == 1 && gc != c) {
						t.Errorf("%v (%d, %d, %d): env %d, diag %d, decoded write %v char %d", task, m, w, c, a, tk.Action(m, w, c), gw, gc)
					}
				}
			}
		}
	}
}

// play runs actions on Copy with an explicit input and returns the episode and its target.
func play(t *testing.T, input []int64, actions []int) (*episode.Episode, []int64) {
	t.Helper()
	env, err := algorithmic.NewEnv(algorithmic.Config{Task: algorithmic.Copy, Base: 3})
	if err != nil {
		t.Fatal(err)
	}
	seed := int64(1)
	obs, _, err := env.Reset(&seed, map[string]any{algorithmic.OptInput: input})
	if err != nil {
		t.Fatal(err)
	}
	e := &episode.Episode{Obs: []int32{int32(obs.(int64))}}
	for _, a := range actions {
		o, r, term, _, _, err := env.Step(int64(a))
		if err != nil {
			t.Fatal(err)
		}
		e.Actions, e.Rewards, e.Obs = append(e.Actions, int32(a)), append(e.Rewards, r), append(e.Obs, int32(o.(int64)))
		if term {
			e.Terminated = true
			break
		}
	}
	return e, env.Target()
}

// TestInspectUniformPolicy zeroes the logit and value heads, so that the policy is exactly uniform
// and V = 0, and checks the measures against their values by hand.
func TestInspectUniformPolicy(t *testing.T) {
	tk := Task{Moves: 2, Base: 3}
	right := func(w, c int) int { return tk.Action(1, w, c) }
	eps, targets := make([]*episode.Episode, 3), make([][]int64, 3)
	// Two correct writes; a wrong write at once; a move, then a wrong write.
	eps[0], targets[0] = play(t, []int64{1, 2}, []int{right(1, 1), right(1, 2)})
	eps[1], targets[1] = play(t, []int64{0, 1}, []int{right(1, 2)})
	eps[2], targets[2] = play(t, []int64{2, 0}, []int{right(0, 0), right(1, 1)})
	if eps[0].TotalReward() != 2 || eps[1].TotalReward() != -0.5 || eps[2].TotalReward() != -0.5 {
		t.Fatalf("rewards %v %v %v", eps[0].Rewards, eps[1].Rewards, eps[2].Rewards)
	}
	for _, algo := range []config.Algo{config.AlgoSparse, config.AlgoSoft} {
		cfg := config.Default()
		cfg.Algo, cfg.Alpha, cfg.Hidden, cfg.Base = algo, 0.01, 8, 3
		eng, err := tensor.NewEngine()
		if err != nil {
			t.Fatal(err)
		}
		m, err := lstm.New(cfg, lstm.Spec{ObsVocab: 4, ActionComponents: []int{2, 2, 3}}, eng)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m.Net.Params() {
			if p.Name == "head0.W" || p.Name == "head0.b" || p.Name == "head1.W" || p.Name == "head1.b" {
				p.Value.Zero()
			}
		}
		b, err := Inspect(m, cfg, tk, eps, targets)
		if err != nil {
			t.Fatal(err)
		}
		K := 12.0
		near := func(name string, got, want float64) {
			t.Helper()
			if math.Abs(got-want) > 1e-6 {
				t.Errorf("%s: %s = %v, want %v", algo, name, got, want)
			}
		}
		near("states", float64(b.States), 5)
		near("rewarded", b.Rewarded, 1.0/3)
		near("write fraction", b.WriteFrac, 4.0/5)
		near("p(write)", b.PWrite, 0.5)
		near("p(correct)", b.PCorrect, 2/K)
		near("p(correct|write)", b.PCorrectGivenWrite, 1.0/3)
		near("correct in support", b.CorrectInSupport, 1)
		near("support", b.Support, K)
		near("max prob", b.MaxProb, 1/K)
		near("logit std", b.LogitStd, 0)
		near("V", b.V, 0)
		near("reward", b.Reward, (2-0.5-0.5)/5)
		if b.SymbolsInSupport != 3 {
			t.Errorf("%s: %d symbols in support, want 3", algo, b.SymbolsInSupport)
		}
		if b.NCorrect != 2 || b.NWrong != 2 || b.NNoWrite != 1 {
			t.Errorf("%s: %d correct, %d wrong, %d no-write actions; want 2, 2, 1", algo, b.NCorrect, b.NWrong, b.NNoWrite)
		}
		// With V = 0 and a small weight, the rewarded path's actions are reinforced and the
		// wrong writes discouraged.
		if !(b.AdvCorrect > 0 && b.AdvWrong < 0) {
			t.Errorf("%s: loss weights correct %v, wrong %v; want > 0 and < 0", algo, b.AdvCorrect, b.AdvWrong)
		}
		if algo == config.AlgoSoft {
			near("soft term", b.TermPolicy, 0.01*math.Log(K))
		} else {
			// alpha/2 - alpha/K, lambda 0 (all in support), -Lambda = alpha/2 * sigmoid(head).
			near("sparse term", b.TermPolicy, 0.01/2-0.01/K)
			near("lambda", b.TermLambda, 0)
		}
	}
	rt := replayTargets(tk, eps)
	if len(rt[0]) != 2 || rt[0][0] != 1 || rt[0][1] != 2 || len(rt[1]) != 1 || rt[1][0] != -1 || len(rt[2]) != 1 || rt[2][0] != -1 {
		t.Errorf("replay targets %v, want [[1 2] [-1] [-1]]", rt)
	}
}

// Expert episodes write every symbol correctly and end when the target is written.
func TestExpertEpisodes(t *testing.T) {
	buf, err := replay.NewEpisodes(100, 0.5, 0.1, "random")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Base = 7
	opts := Options{Registry: registry.Default(), Expert: 30}
	if err := addExperts(context.Background(), opts, train.Watched{Config: cfg, Replay: buf}, 0); err != nil {
		t.Fatal(err)
	}
	perfect := buf.Count(func(e *episode.Episode) bool {
		return e.Terminated && e.Len() >= 2 && e.TotalReward() == float64(e.Len())
	})
	if buf.Len() != 30 || perfect != 30 {
		t.Errorf("%d expert episodes stored, %d perfect; want 30 and 30", buf.Len(), perfect)
	}
	// At a curriculum level, as a continued run's experts are: inputs of at least that length.
	long, err := replay.NewEpisodes(100, 0.5, 0.1, "random")
	if err != nil {
		t.Fatal(err)
	}
	if err := addExperts(context.Background(), opts, train.Watched{Config: cfg, Replay: long}, 10); err != nil {
		t.Fatal(err)
	}
	if n := long.Count(func(e *episode.Episode) bool {
		return e.Terminated && e.Len() >= 10 && e.TotalReward() == float64(e.Len())
	}); n != 30 {
		t.Errorf("%d of 30 expert episodes at min_length 10 are perfect and at least 10 steps long", n)
	}
	// Under the advantage priority they are stored with their surpluses over the run's V, as the
	// run stores its own episodes.
	adv, err := replay.NewEpisodes(100, 0.5, 0, "random")
	if err != nil {
		t.Fatal(err)
	}
	cfg.ReplayPriority, cfg.Hidden = config.PriorityAdvantage, 8
	l, err := lstm.NewLearner(cfg, lstm.Spec{ObsVocab: 8, ActionComponents: []int{2, 2, 7}}, tensor.GonumEngine())
	if err != nil {
		t.Fatal(err)
	}
	if err := addExperts(context.Background(), opts, train.Watched{Config: cfg, Replay: adv, Learner: l}, 0); err != nil {
		t.Fatal(err)
	}
	stored := adv.Sample(rand.New(rand.NewPCG(3, 4)), adv.Len())
	if _, err := l.Loss(stored, false); err != nil {
		t.Fatal(err)
	}
	want := l.Objective().Surpluses(nil)
	for i := range want {
		want[i] = math.Exp(0.5 * want[i])
	}
	z := floats.Sum(want)
	floats.Scale(1/z, want)
	got := adv.Probabilities()
	slices.Sort(got)
	slices.Sort(want)
	if !floats.EqualApprox(got, want, 1e-9) {
		t.Errorf("replay probabilities of the expert episodes %v, want the softmax of their surpluses %v", got, want)
	}
	// Every task has its expert: on ReversedAddition the zig-zag with its carries.
	cfg.Env, cfg.Base, cfg.ReplayPriority = "ReversedAddition-v0", 3, config.Default().ReplayPriority
	grid, err := replay.NewEpisodes(100, 0.5, 0.1, "random")
	if err != nil {
		t.Fatal(err)
	}
	if err := addExperts(context.Background(), opts, train.Watched{Config: cfg, Replay: grid}, 0); err != nil {
		t.Fatal(err)
	}
	if n := grid.Count(func(e *episode.Episode) bool {
		return e.Terminated && e.Len() >= 4 && e.TotalReward() >= 2 && e.Rewards[len(e.Rewards)-1] == 1
	}); n != 30 {
		t.Errorf("%d of 30 ReversedAddition expert episodes end on a rewarded write with every symbol right", n)
	}
	cfg.Env = "CartPole-v1"
	if err := addExperts(context.Background(), opts, train.Watched{Config: cfg, Replay: buf}, 0); err == nil || !strings.Contains(err.Error(), "unknown task") {
		t.Errorf("expert episodes for CartPole: %v, want a refusal naming the task", err)
	}
}

// The probe trains through agent/train's loop: inspecting changes nothing it trains, so its
// records hold the rows of the same run of train.Run, bit for bit, with the weight schedule.
func TestProbeTrainsAsRun(t *testing.T) {
	cfg := config.Default()
	cfg.Base, cfg.BatchSize, cfg.Hidden, cfg.Iters, cfg.EvalEvery = 3, 8, 8, 5, 0
	cfg.AlphaStart, cfg.AlphaDecay = 0.5, 0.01 // the weight moves at every iteration
	sum, err := train.Run(context.Background(), cfg, train.Options{Registry: registry.Default(), Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	cfg.AlphaStart, cfg.AlphaDecay = 0, 0
	recs, err := Probe(context.Background(), cfg, Options{Registry: registry.Default(), Every: 2, AlphaStart: 0.5, AlphaDecay: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0].Iteration != 0 || recs[1].Iteration != 2 || recs[2].Iteration != 4 {
		t.Fatalf("%d records, want iterations 0, 2 and 4: %+v", len(recs), recs)
	}
	for _, r := range recs {
		row := sum.Rows[r.Iteration]
		if r.MeanReward != row.MeanReward || r.Loss != row.Loss || r.GradNorm != row.GradNorm || r.Alpha != row.Alpha || r.Curriculum != row.Curriculum {
			t.Errorf("iteration %d: probe reward %v, loss %v, grad norm %v, alpha %v, curriculum %d; train.Run %v, %v, %v, %v, %d",
				r.Iteration, r.MeanReward, r.Loss, r.GradNorm, r.Alpha, r.Curriculum, row.MeanReward, row.Loss, row.GradNorm, row.Alpha, row.Curriculum)
		}
	}
	if recs[0].Alpha == recs[2].Alpha {
		t.Errorf("alpha %v at iterations 0 and 4: the schedule did not move", recs[0].Alpha)
	}
}

// Probing with From continues the run from its checkpoint in a copy: the records are the rows the
// run itself would have trained next, bit for bit, and the source directory is left as it was.
func TestProbeContinuesRun(t *testing.T) {
	cfg := config.Default()
	cfg.Base, cfg.BatchSize, cfg.Hidden, cfg.EvalEvery = 3, 8, 8, 0
	quiet := slog.New(slog.DiscardHandler)
	cfg.Iters = 9
	whole, err := train.Run(context.Background(), cfg, train.Options{Registry: registry.Default(), Dir: t.TempDir(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	cfg.Iters = 6
	if _, err := train.Run(context.Background(), cfg, train.Options{Registry: registry.Default(), Dir: src, Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(src, runstore.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	more := config.Default()
	more.Iters = 3
	recs, err := Probe(context.Background(), more, Options{Registry: registry.Default(), Every: 1, From: src, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0].Iteration != 6 || recs[2].Iteration != 8 {
		t.Fatalf("%d records, want iterations 6, 7 and 8: %+v", len(recs), recs)
	}
	for _, r := range recs {
		row := whole.Rows[r.Iteration]
		if r.MeanReward != row.MeanReward || r.Loss != row.Loss || r.GradNorm != row.GradNorm {
			t.Errorf("iteration %d: probe reward %v, loss %v, grad norm %v; the whole run %v, %v, %v",
				r.Iteration, r.MeanReward, r.Loss, r.GradNorm, row.MeanReward, row.Loss, row.GradNorm)
		}
	}
	if after, err := os.ReadFile(filepath.Join(src, runstore.MetricsFile)); err != nil || string(after) != string(before) {
		t.Errorf("the source run's metrics changed (%v)", err)
	}
	if meta, err := runstore.Dir(dir).Meta(); err != nil || meta.Iteration != 9 {
		t.Errorf("the probed copy is at iteration %d (%v), want 9", meta.Iteration, err)
	}
	if _, err := Probe(context.Background(), more, Options{Registry: registry.Default(), From: src, Dir: dir}); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("probing into an existing directory: %v, want a refusal naming it", err)
	}
	if _, err := Probe(context.Background(), more, Options{Registry: registry.Default(), From: t.TempDir(), Dir: filepath.Join(t.TempDir(), "x")}); err == nil || !strings.Contains(err.Error(), "no checkpoint") {
		t.Errorf("continuing a directory without a checkpoint: %v, want a refusal", err)
	}
}

// TestLearnsCopyMappingFromExperts is the capability that the |A| = 160 diagnosis rests on
// (docs/results/copy-base40-diagnosis.md): with the symbol mapping in the replay data, sparse PCL
// at the paper's settings learns it and starts climbing the curriculum within a few dozen
// iterations. A learner whose loss, gradients or replay step were broken would not.
func TestLearnsCopyMappingFromExperts(t *testing.T) {
	if testing.Short() {
		t.Skip("trains for a few seconds")
	}
	cfg := config.Default()
	cfg.Base, cfg.BatchSize, cfg.Hidden, cfg.Iters, cfg.ReplayCapacity = 10, 50, 32, 60, 20000
	recs, err := Probe(context.Background(), cfg, Options{Registry: registry.Default(), Every: 10, Expert: 200})
	if err != nil {
		t.Fatal(err)
	}
	last := recs[len(recs)-1]
	if last.Fresh.PCorrectGivenWrite < 0.8 || last.Curriculum <= 2 || last.Fresh.SymbolsInSupport != 10 {
		t.Errorf("after %d iterations with expert data: p(correct|write) %.2f, curriculum %d, %d of 10 symbols in support; want > 0.8, > 2, 10",
			cfg.Iters, last.Fresh.PCorrectGivenWrite, last.Curriculum, last.Fresh.SymbolsInSupport)
	}
	if first := recs[0]; first.Fresh.PCorrectGivenWrite > 0.2 {
		t.Errorf("the first policy already knows the mapping (p(correct|write) %.2f): the test shows nothing", first.Fresh.PCorrectGivenWrite)
	}
}

// ReplayWrites finds the episodes with a rewarded write of the symbol (not an unrewarded one, not
// another symbol's) and sums their replay probabilities.
func TestReplayWrites(t *testing.T) {
	task := Task{Moves: 2, Base: 5}
	buf, err := replay.NewEpisodes(10, 1, 0.2, "random")
	if err != nil {
		t.Fatal(err)
	}
	mk := func(acts []int, rews []float64) *episode.Episode {
		e := &episode.Episode{Terminated: true, Obs: make([]int32, len(acts)+1)}
		for i, a := range acts {
			e.Actions, e.Rewards = append(e.Actions, int32(a)), append(e.Rewards, rews[i])
		}
		return e
	}
	rng := rand.New(rand.NewPCG(1, 1))
	eps := []*episode.Episode{
		mk([]int{task.Action(1, 1, 3), task.Action(1, 1, 4)}, []float64{1, 1}), // holds 4
		mk([]int{task.Action(1, 1, 4)}, []float64{-0.5}),                       // a wrong write of 4
		mk([]int{task.Action(1, 0, 4), task.Action(1, 1, 2)}, []float64{0, 1}), // no write of 4
		mk([]int{task.Action(0, 1, 4)}, []float64{1}),                          // holds 4
	}
	prios := []float64{2, -0.5, 1, 1}
	for i, e := range eps {
		if err := buf.Add(rng, e, prios[i]); err != nil {
			t.Fatal(err)
		}
	}
	w := ReplayWrites(buf, task, 4)
	p := buf.Probabilities()
	if w.Episodes != 4 || w.Holding != 2 || w.MeanLen != 1.5 || math.Abs(w.Mass-(p[0]+p[3])) > 1e-12 || w.Uniform != 0.5 {
		t.Errorf("writes of 4: %+v; want 4 episodes, 2 holding, mean length 1.5, mass %v, uniform 0.5", w, p[0]+p[3])
	}
	if w := ReplayWrites(buf, task, 0); w.Holding != 0 || w.Mass != 0 || w.MeanLen != 0 {
		t.Errorf("writes of 0: %+v, want none", w)
	}
}
