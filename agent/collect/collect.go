// Package collect is the one experience collector: it steps the copies of a VecEnv with a policy
// network and turns what they did into trajectories, for both network families.
//
// Two segmenting rules share one stepping and drawing path:
//
//   - Episodes plays one whole episode in every copy: all copies start together from given seeds
//     and step in lockstep until each has ended (terminated, truncated, or cut at MaxSteps). The
//     algorithmic tasks train on these, and every greedy evaluation plays them.
//   - Segments takes a fixed number of steps in every copy from where it stands and cuts what
//     each did into sub-episodes: a copy whose episode ended is reset before its next step, from a
//     seed derived from the run's, so no sub-episode crosses an episode boundary. Continuous
//     control trains on these.
//
// A family plugs in with an Actor (its network, one step of every copy) and an Encoder (how an
// env observation becomes the network's input values): lstm.Actor and lstm.TokenEncoder for the
// LSTM, mlp.Model and mlp.NewEncoder for the feed-forward networks.
package collect

import (
	"fmt"
	"math"

	"github.com/sparsepcl/sparsepcl/agent/episode"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs"
)

// Actor is a network acting in n env copies, one step at a time.
type Actor[O episode.Observation] interface {
	// Layout is the heads' layout and algebra (the policy of a row of head 0).
	Layout() *pcl.Heads
	// InputDim is the number of encoded values per observation.
	InputDim() int
	// Begin forgets what the copies with fresh[i] set carried from their last episode (a
	// recurrent state); they start a new one.
	Begin(fresh []bool)
	// Act computes head 0 for every copy's current observation (n x InputDim values of obs) and
	// previous action (prev, -1 at an episode's start): one row per copy, valid until the next
	// Act.
	Act(obs []O, prev []int32) (*tensor.Matrix, error)
}

// Encoder writes an env observation as the network's input values.
type Encoder[O episode.Observation] interface {
	// Dim is the number of values per observation.
	Dim() int
	// Encode writes row r of obs into dst (len Dim).
	Encode(dst []O, obs envs.Array, r int) error
}

// Mode says how actions are chosen.
type Mode int

const (
	// Sample draws each action from the policy (or, under SetExplore, sometimes explores).
	Sample Mode = iota
	// Greedy takes the policy's most likely action (the lowest index on ties).
	Greedy
)

// Options are a collector's fixed settings.
type Options struct {
	// MaxSteps cuts an episode of Episodes after this many steps, as truncated (0: no cut).
	MaxSteps int
	// Seed is the run's seed, from which Segments derives its reset seeds.
	Seed int64
}

// Collector collects trajectories from the copies of one env (autoreset disabled) with one
// actor. It is not safe for concurrent use.
type Collector[O episode.Observation] struct {
	env   envs.VecEnv
	enc   Encoder[O]
	actor Actor[O]
	opts  Options
	n, K  int

	explore  float64 // probability of an exploring action at a drawn step
	explorer int     // copies [0, explorer) explore
	temp     float64 // exploring actions from softmax(z/temp) of the logits (0: uniformly)

	// Watch, when not nil, sees the policy logits of every greedy step of a copy still playing
	// (valid during the call).
	Watch func(z []float32)

	obs     []O     // each copy's current encoded observation, n x dim
	prev    []int32 // each copy's previous action (-1: none)
	fresh   []bool  // the copies Begin is told about
	seen    []O     // Segments' Batch.Observations, reused
	actions envs.Array
	draws   []copyDraw
	work    []pcl.RowScratch
	p, z, q []float32
	window  statWindow

	// the Segments rule's state
	cur      []*episode.Trajectory[O]   // the sub-episode each copy is in (nil: it must be reset)
	episode  [][]*episode.Trajectory[O] // each copy's sub-episodes of its current episode
	epReturn []float64
	epLen    []int
	resetReq envs.ResetRequest
}

// New returns a collector over env, which must have autoreset disabled and a Discrete action
// space of the actor's size, with observations encoded by enc to the actor's input size.
func New[O episode.Observation](env envs.VecEnv, enc Encoder[O], actor Actor[O], opts Options) (*Collector[O], error) {
	if env.AutoresetMode() != envs.AutoresetDisabled {
		return nil, fmt.Errorf("collect: env autoreset mode is %v, the collector needs %v", env.AutoresetMode(), envs.AutoresetDisabled)
	}
	K := actor.Layout().NumActions()
	if act, ok := env.ActionSpace().(envs.Discrete); !ok || act.Start != 0 || int(act.N) != K {
		return nil, fmt.Errorf("collect: env action space %v, the network has Discrete(%d)", env.ActionSpace(), K)
	}
	if enc.Dim() != actor.InputDim() {
		return nil, fmt.Errorf("collect: observations encode to %d values, the network reads %d", enc.Dim(), actor.InputDim())
	}
	if opts.MaxSteps < 0 {
		return nil, fmt.Errorf("collect: max steps %d, want >= 0", opts.MaxSteps)
	}
	n := env.NumEnvs()
	c := &Collector[O]{env: env, enc: enc, actor: actor, opts: opts, n: n, K: K,
		obs: make([]O, n*enc.Dim()), prev: make([]int32, n), fresh: make([]bool, n), actions: envs.NewArray(envs.Int64, n),
		p: make([]float32, K), z: make([]float32, K), q: make([]float32, K), window: newStatWindow(1000),
		cur: make([]*episode.Trajectory[O], n), episode: make([][]*episode.Trajectory[O], n), epReturn: make([]float64, n), epLen: make([]int, n),
		resetReq: envs.ResetRequest{Seeds: make([]int64, n), Mask: make([]bool, n)}}
	return c, nil
}

// SetExplore makes each drawn step of the first ⌈share·n⌉ copies (share 0: every copy) take a
// uniformly random action with probability eps instead of the policy's draw (ε-uniform
// exploration); eps 0, the default, draws from the policy alone. Greedy steps are unaffected,
// and the statistics stay the policy's.
func (c *Collector[O]) SetExplore(eps, share float64) error {
	if !(eps >= 0 && eps < 1) {
		return fmt.Errorf("collect: exploration probability %v, want it in [0, 1)", eps)
	}
	if !(share >= 0 && share <= 1) {
		return fmt.Errorf("collect: exploring share of the copies %v, want it in [0, 1] (0: every copy)", share)
	}
	c.explore, c.explorer = eps, c.n
	if share > 0 {
		c.explorer = int(math.Ceil(share * float64(c.n)))
	}
	return nil
}

// SetExploreTemperature makes the exploring actions of SetExplore draw from softmax(z/temp) of
// the policy's logits z instead of uniform ones: every action stays possible, ranked by its logit,
// so the runners-up that a sparse policy keeps out of its support are proposed far more often
// than 1/|A| while the actions it has learned to avoid are proposed less. temp 0, the default,
// keeps the uniform draw; a large temp approaches it.
func (c *Collector[O]) SetExploreTemperature(temp float64) error {
	if !(temp >= 0) || math.IsInf(temp, 0) {
		return fmt.Errorf("collect: exploration temperature %v, want a finite value >= 0 (0: uniform)", temp)
	}
	c.temp = temp
	return nil
}

// Batch is what one Episodes or Segments call collected.
type Batch[O episode.Observation] struct {
	// Trajectories are Episodes' episodes, in copy order, or Segments' sub-episodes: those ended
	// by a termination or truncation, then one cut piece per copy whose episode goes on.
	Trajectories []*episode.Trajectory[O]
	// Returns and Lengths are the undiscounted returns and lengths of the episodes completed
	// (Episodes: every copy's, in copy order).
	Returns []float64
	Lengths []int
	// Ended holds the sub-episodes of each episode that Segments saw end, in order, for
	// FillReturnsToGo: its earlier sub-episodes came in earlier calls.
	Ended [][]*episode.Trajectory[O]
	// Stats are the policy's statistics over the states where an action was drawn (not greedy).
	Stats pcl.Stats
	// Observations are the encoded observations reached (for an observation normaliser).
	Observations []O
	// EnvSteps is the number of env steps taken by copies still playing; Explored is how many of
	// them took an exploring action (SetExplore).
	EnvSteps, Explored int
	// EnvSeconds is the time spent in the env's Reset and Step (transport included);
	// PolicySeconds the time spent computing actions.
	EnvSeconds, PolicySeconds float64
}

// MeanReturn is the mean of Returns (NaN when no episode was completed).
func (b *Batch[O]) MeanReturn() float64 {
	if len(b.Returns) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, r := range b.Returns {
		s += r
	}
	return s / float64(len(b.Returns))
}

// Window is the policy statistics of the last (up to) 1000 drawn steps: the mean probability of
// the most likely action and the mean support size.
func (c *Collector[O]) Window() (maxProb, support float64) { return c.window.means() }

// WindowState and SetWindowState save and restore the statistics window (for checkpoints).
func (c *Collector[O]) WindowState() WindowState           { return c.window.state() }
func (c *Collector[O]) SetWindowState(w WindowState) error { return c.window.restore(w) }
