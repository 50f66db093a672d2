// Package watch plays a trained run's greedy policy one step at a time on a single algorithmic
// task, so that a person can follow what it does (pcl play --run). Each step reports the action
// taken, the probability the policy gave it and the size of the policy's support.
package watch

import (
	"fmt"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/model/lstm"
	"github.com/sparsepcl/sparsepcl/agent/policy"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
)

// tapeEnv is what the player needs of an env: an algorithmic task that draws itself and whose
// curriculum level can be set.
type tapeEnv interface {
	envs.Env
	envs.ActionFactors
	Render() string
	Curriculum() *algorithmic.Curriculum
	Task() algorithmic.Task
}

// Player holds a run's trained model and one env it plays on.
type Player struct {
	Config config.Config
	Meta   runstore.Meta
	env    tapeEnv
	model  *lstm.Model
	radix  envs.MixedRadix
	state  *lstm.State
	tokens []int32
	heads  []*tensor.Matrix
	p, z   []float32
	obs    int32
	prev   int // previous action, -1 at the start of an episode
	steps  int
	ret    float64
	done   bool
}

// Step is one greedy step.
type Step struct {
	Action  int     // combined action index
	Digits  []int64 // its components: move, write flag, symbol
	Prob    float64 // the policy's probability of the action
	Support int     // actions with a non-zero probability
	Reward  float64
	Return  float64 // of the episode so far
	Done    bool    // the episode ended (terminated, or cut at the time limit or the run's max steps)
}

// Open loads the checkpoint of the run in dir (an LSTM run on an algorithmic task) and makes the
// env it plays on from reg. eng nil picks the default engine.
func Open(dir string, reg *envs.Registry, eng *tensor.Engine) (*Player, error) {
	cfg, err := runstore.Dir(dir).Config()
	if err != nil {
		return nil, err
	}
	if err := train.FamilyOf(cfg).Supports(train.ToolPlay, dir); err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	raw, err := reg.Make(cfg.Env, map[string]any{"base": cfg.Base})
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	env, ok := raw.(tapeEnv)
	if !ok {
		raw.Close()
		return nil, fmt.Errorf("watch: %s cannot be played on the terminal", cfg.Env)
	}
	pl, err := newPlayer(dir, cfg, env, eng)
	if err != nil {
		env.Close()
		return nil, err
	}
	return pl, nil
}

func newPlayer(dir string, cfg config.Config, env tapeEnv, eng *tensor.Engine) (*Player, error) {
	obs, ok := env.ObservationSpace().(envs.Discrete)
	if !ok {
		return nil, fmt.Errorf("watch: %s observation space %v is not Discrete", cfg.Env, env.ObservationSpace())
	}
	comps := env.ActionComponents()
	spec := lstm.Spec{ObsVocab: int(obs.N)}
	for _, c := range comps {
		spec.ActionComponents = append(spec.ActionComponents, int(c))
	}
	radix, err := envs.NewMixedRadix(comps...)
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	if eng == nil {
		if eng, err = tensor.NewEngine(); err != nil {
			return nil, fmt.Errorf("watch: %w", err)
		}
	}
	l, err := lstm.NewLearner(cfg, spec, eng)
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	meta, err := train.LoadCheckpoint(dir, l)
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	sizes := l.Model.Net.Config().HeadSizes
	heads := make([]*tensor.Matrix, len(sizes))
	for i, sz := range sizes {
		heads[i] = tensor.New(1, sz)
	}
	K := spec.NumActions()
	return &Player{
		Config: cfg, Meta: meta, env: env, model: l.Model, radix: radix,
		tokens: make([]int32, spec.Features()), heads: heads,
		p: make([]float32, K), z: make([]float32, K), done: true,
	}, nil
}

// Close releases the env.
func (pl *Player) Close() error { return pl.env.Close() }

// TrainedLevel is the curriculum level the run had reached (the task's first level when the
// checkpoint holds none).
func (pl *Player) TrainedLevel() int {
	if l, ok := pl.Meta.TrainedLevel(); ok {
		return l
	}
	return pl.env.Curriculum().MinLength()
}

// Reset starts an episode at curriculum level (min_length) level, on the input given (nil: a
// random one; see the algorithmic package for its form) drawn with seed (nil: the env's stream).
func (pl *Player) Reset(level int, seed *int64, input any) error {
	cur := pl.env.Curriculum()
	if err := cur.Restore(algorithmic.CurriculumState{MinLength: level}); err != nil {
		return fmt.Errorf("watch: level %d: %w", level, err)
	}
	var opts map[string]any
	if input != nil {
		opts = map[string]any{algorithmic.OptInput: input}
	}
	obs, _, err := pl.env.Reset(seed, opts)
	if err != nil {
		return fmt.Errorf("watch: reset: %w", err)
	}
	o, ok := obs.(int64)
	if !ok {
		return fmt.Errorf("watch: observation %v (%T) is not an int64", obs, obs)
	}
	pl.obs, pl.prev, pl.steps, pl.ret, pl.done = int32(o), -1, 0, 0, false
	pl.state = pl.model.Net.NewState(1)
	return nil
}

// Grid reports whether the task reads a grid (its inputs are columns) rather than a tape.
func (pl *Player) Grid() bool { return pl.env.Task().Grid() }

// NumActions is |A|.
func (pl *Player) NumActions() int { return len(pl.p) }

// Return is the current episode's return so far.
func (pl *Player) Return() float64 { return pl.ret }

// Render draws the env's current state.
func (pl *Player) Render() string { return pl.env.Render() }

// Step takes the policy's most likely action.
func (pl *Player) Step() (Step, error) {
	if pl.done {
		return Step{}, fmt.Errorf("watch: the episode is over; Reset first")
	}
	pl.tokens[0] = pl.obs
	pl.model.Spec.PrevActionTokens(pl.tokens[1:], pl.prev)
	if err := pl.model.Net.Step(pl.state, pl.tokens, pl.heads); err != nil {
		return Step{}, fmt.Errorf("watch: %w", err)
	}
	pl.model.Probs(pl.p, pl.z, pl.heads[0].Row(0))
	a := policy.Greedy(pl.z, nil)
	if a < 0 {
		return Step{}, fmt.Errorf("watch: step %d: the policy has no valid action (non-finite logits?)", pl.steps+1)
	}
	st := Step{Action: a, Prob: float64(pl.p[a]), Digits: make([]int64, pl.radix.Len())}
	for _, v := range pl.p {
		if v > 0 {
			st.Support++
		}
	}
	if err := pl.radix.Split(int64(a), st.Digits); err != nil {
		return Step{}, fmt.Errorf("watch: %w", err)
	}
	obs, r, term, trunc, _, err := pl.env.Step(int64(a))
	if err != nil {
		return Step{}, fmt.Errorf("watch: step %d: %w", pl.steps+1, err)
	}
	o, ok := obs.(int64)
	if !ok {
		return Step{}, fmt.Errorf("watch: observation %v (%T) is not an int64", obs, obs)
	}
	pl.obs, pl.prev = int32(o), a
	pl.steps++
	pl.ret += r
	pl.done = term || trunc || pl.steps >= pl.Config.MaxSteps
	st.Reward, st.Return, st.Done = r, pl.ret, pl.done
	return st, nil
}
