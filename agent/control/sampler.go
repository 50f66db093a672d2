package control

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/policy"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs"
)

// Sampler steps the copies of a VecEnv (autoreset disabled) from where they stand and cuts what
// they did into segments. A copy whose episode ended is reset before its next step with a seed
// derived from the run seed, the iteration, the copy and the step, so a run is a function of its
// seed. Reset copies start new segments, so no segment crosses an episode boundary.
type Sampler struct {
	env    envs.VecEnv
	enc    Encoder
	pol    Policy
	seed   int64
	gamma  float64 // the discount of the returns to go
	n, dim int

	cur      []*Segment   // the segment each copy is in (nil: the copy must be reset)
	episode  [][]*Segment // each copy's segments of its current episode, in order
	obs      []float32    // the current encoded observation of each copy, n x dim
	epReturn []float64
	epLen    []int
	actions  envs.Array
	x        *tensor.Matrix
	p, z     []float32
	draws    []copyDraw
	work     []pcl.RowScratch
	fresh    []float32 // the encoded observations seen in the current Collect
	window   statWindow
	resetReq envs.ResetRequest
}

// Collected is what one Collect produced.
type Collected struct {
	// Segments are the pieces completed in this call: those ended by a termination or truncation,
	// then one cut piece per copy whose episode goes on.
	Segments []*Segment
	// Returns and Lengths are the undiscounted returns and lengths of the episodes completed.
	Returns []float64
	Lengths []int
	// Observations are the encoded observations reached in this call (for the normaliser).
	Observations []float32
	EnvSteps     int
	// EnvSeconds is the time spent in the env's Reset and Step (transport included);
	// PolicySeconds the time spent computing actions.
	EnvSeconds, PolicySeconds float64
}

// Policy is what the sampler, Evaluate and Record read of a model (Model implements it): the
// heads of a batch of observation rows, and the policy algebra of those heads.
type Policy interface {
	// InputDim is the length of an encoded observation.
	InputDim() int
	// Input writes the network input of encoded observations obs (rows x InputDim) into x.
	Input(x *tensor.Matrix, obs []float32)
	// Forward computes the heads of the rows of x (valid until the next Forward).
	Forward(x *tensor.Matrix) ([]*tensor.Matrix, error)
	// Layout is the heads' layout and algebra.
	Layout() *pcl.Heads
}

// NewSampler returns a sampler over env (which must have autoreset disabled and a Discrete action
// space of the policy's size) that draws from pol, encodes observations with enc, and discounts the
// returns to go by gamma.
func NewSampler(env envs.VecEnv, enc Encoder, pol Policy, gamma float64, seed int64) (*Sampler, error) {
	if env.AutoresetMode() != envs.AutoresetDisabled {
		return nil, fmt.Errorf("control: env autoreset mode is %v, the sampler needs %v", env.AutoresetMode(), envs.AutoresetDisabled)
	}
	act, ok := env.ActionSpace().(envs.Discrete)
	K := pol.Layout().NumActions()
	if !ok || int(act.N) != K {
		return nil, fmt.Errorf("control: env action space %v, the model has Discrete(%d)", env.ActionSpace(), K)
	}
	if enc.Dim() != pol.InputDim() {
		return nil, fmt.Errorf("control: observations encode to %d values, the model reads %d", enc.Dim(), pol.InputDim())
	}
	n, d := env.NumEnvs(), enc.Dim()
	s := &Sampler{env: env, enc: enc, pol: pol, seed: seed, gamma: gamma, n: n, dim: d,
		cur: make([]*Segment, n), episode: make([][]*Segment, n), obs: make([]float32, n*d), epReturn: make([]float64, n), epLen: make([]int, n),
		actions: envs.NewArray(envs.Int64, n), x: tensor.New(0, d), p: make([]float32, K), z: make([]float32, K),
		window: newStatWindow(1000)}
	s.resetReq = envs.ResetRequest{Seeds: make([]int64, n), Mask: make([]bool, n)}
	return s, nil
}

// MidEpisode reports how many copies are in the middle of an episode.
func (s *Sampler) MidEpisode() int {
	k := 0
	for _, c := range s.cur {
		if c != nil {
			k++
		}
	}
	return k
}

// Window is the on-policy statistics of the last (up to) 1000 steps: the mean probability of the
// most likely action and the mean support size.
func (s *Sampler) Window() (maxProb, support float64) { return s.window.means() }

// WindowState and SetWindowState save and restore the statistics window (for checkpoints).
func (s *Sampler) WindowState() WindowState           { return s.window.state() }
func (s *Sampler) SetWindowState(w WindowState) error { return s.window.restore(w) }

// seedFor derives the reset seed of copy i at step t of iteration it.
func (s *Sampler) seedFor(it, i, t int) int64 {
	x := uint64(s.seed)*0x9e3779b97f4a7c15 ^ uint64(it)*0xbf58476d1ce4e5b9 ^ uint64(i)*0x94d049bb133111eb ^ uint64(t)*0xd6e9f8cc4f2a8e4b
	x ^= x >> 31
	x *= 0xd6e9f8cc4f2a8e4b
	x ^= x >> 29
	return int64(x >> 33)
}

// Collect takes steps env steps in every copy, drawing actions from the policy with rng, and tags
// the segments with iteration.
func (s *Sampler) Collect(ctx context.Context, rng *rand.Rand, steps, iteration int) (Collected, error) {
	var out Collected
	s.fresh = s.fresh[:0]
	D := s.dim
	for t := range steps {
		if err := ctx.Err(); err != nil {
			return out, fmt.Errorf("control: sampling: %w", err)
		}
		if err := s.resetEnded(ctx, iteration, t, &out); err != nil {
			return out, err
		}
		t0 := time.Now()
		s.pol.Input(s.x, s.obs)
		heads, err := s.pol.Forward(s.x)
		if err != nil {
			return out, fmt.Errorf("control: sampling: %w", err)
		}
		if err := s.draw(heads[0], rng); err != nil {
			return out, err
		}
		t1 := time.Now()
		res, err := s.env.Step(ctx, s.actions)
		out.EnvSeconds += time.Since(t1).Seconds()
		out.PolicySeconds += t1.Sub(t0).Seconds()
		if err != nil {
			return out, fmt.Errorf("control: step: %w", err)
		}
		for i := range s.n {
			seg := s.cur[i]
			row := s.obs[i*D : (i+1)*D]
			if err := s.enc.Encode(row, res.Obs, i); err != nil {
				return out, err
			}
			s.fresh = append(s.fresh, row...)
			seg.Actions = append(seg.Actions, int32(s.actions.Ints[i]))
			seg.Rewards = append(seg.Rewards, res.Rewards[i])
			seg.Obs = append(seg.Obs, row...)
			s.epReturn[i] += res.Rewards[i]
			s.epLen[i]++
			out.EnvSteps++
			if res.Terminated[i] || res.Truncated[i] {
				seg.Terminated, seg.Truncated = res.Terminated[i], !res.Terminated[i]
				out.Segments = append(out.Segments, seg)
				out.Returns = append(out.Returns, s.epReturn[i])
				out.Lengths = append(out.Lengths, s.epLen[i])
				fillReturnsToGo(s.episode[i], s.gamma)
				s.cur[i], s.episode[i] = nil, nil
			}
		}
	}
	for i, seg := range s.cur {
		if seg == nil || seg.Len() == 0 {
			continue
		}
		out.Segments = append(out.Segments, seg)
		last := s.obs[i*D : (i+1)*D]
		s.cur[i] = &Segment{Obs: append(make([]float32, 0, (steps+1)*D), last...), Iteration: iteration + 1}
		s.episode[i] = append(s.episode[i], s.cur[i])
	}
	out.Observations = s.fresh
	return out, nil
}

// resetEnded resets the copies that have no current segment and starts their segments.
func (s *Sampler) resetEnded(ctx context.Context, it, t int, out *Collected) error {
	some := false
	for i, c := range s.cur {
		s.resetReq.Mask[i] = c == nil
		if c == nil {
			s.resetReq.Seeds[i] = s.seedFor(it, i, t)
			some = true
		}
	}
	if !some {
		return nil
	}
	t0 := time.Now()
	obs, _, err := s.env.Reset(ctx, s.resetReq)
	out.EnvSeconds += time.Since(t0).Seconds()
	if err != nil {
		return fmt.Errorf("control: reset: %w", err)
	}
	D := s.dim
	for i, c := range s.cur {
		if c != nil {
			continue
		}
		row := s.obs[i*D : (i+1)*D]
		if err := s.enc.Encode(row, obs, i); err != nil {
			return err
		}
		s.fresh = append(s.fresh, row...)
		s.cur[i] = &Segment{Obs: append([]float32(nil), row...), Iteration: it}
		s.episode[i] = append(s.episode[i][:0], s.cur[i])
		s.epReturn[i], s.epLen[i] = 0, 0
	}
	return nil
}

// copyDraw is one copy's draw in a step: its uniform number in, its action and policy
// statistics out.
type copyDraw struct {
	u                float64
	action           int
	maxProb, support float32
	fallback         bool // the row needs the reference path (non-finite, or Tsallis)
}

// drawParallelMin is the number of logits per step (copies x |A|) from which draw splits the
// copies over goroutines: below it a row pass costs about what handing it over does.
const drawParallelMin = 1 << 16

// draw picks every copy's action from the policy of its row of head0 (one row per copy), drawing
// the copies' uniform numbers from rng in copy order, and records the policy statistics. The
// copies' policies are computed in parallel by the float32 row kernels (the learner's fast
// path); each copy's action is the inverse of its policy's cumulative distribution at its
// number, exactly as policy.Sample does it, so the actions do not depend on the workers.
func (s *Sampler) draw(head0 *tensor.Matrix, rng *rand.Rand) error {
	m := s.pol.Layout()
	K := m.NumActions()
	if cap(s.draws) < s.n {
		s.draws = make([]copyDraw, s.n)
	}
	s.draws = s.draws[:s.n]
	for i := range s.draws {
		s.draws[i] = copyDraw{u: rng.Float64()}
	}
	workers := min(tensor.Workers(0), s.n)
	if s.n*K < drawParallelMin {
		workers = 1
	}
	if len(s.work) < workers {
		s.work = append(s.work, make([]pcl.RowScratch, workers-len(s.work))...)
	}
	run := func(w, lo, hi int) {
		for i := lo; i < hi; i++ {
			d := &s.draws[i]
			var ok bool
			d.action, d.maxProb, d.support, ok = m.SampleRow(&s.work[w], head0.Row(i), d.u)
			d.fallback = !ok
		}
	}
	if workers > 1 {
		tensor.ParallelRows(s.n, 1, workers, run)
	} else {
		run(0, 0, s.n)
	}
	for i := range s.draws {
		d := &s.draws[i]
		if d.fallback {
			m.Probs(s.p, s.z, head0.Row(i))
			d.action = policy.SampleWithUniform(s.p, d.u)
			d.maxProb, d.support = pcl.RowStats(s.p)
		}
		if d.action < 0 {
			return fmt.Errorf("control: copy %d: the policy has no valid action (non-finite logits?)", i)
		}
		s.window.addStats(d.maxProb, d.support)
		s.actions.Ints[i] = int64(d.action)
	}
	return nil
}

// Evaluate plays one greedy episode in every copy of env (autoreset disabled), from seeds
// seedBase+i, for at most maxSteps steps, with pol's greedy actions, and returns the undiscounted
// returns.
func Evaluate(ctx context.Context, env envs.VecEnv, enc Encoder, pol Policy, seedBase int64, maxSteps int) ([]float64, error) {
	return EvaluateWatched(ctx, env, enc, pol, seedBase, maxSteps, nil)
}

// EvaluateWatched is Evaluate that also calls watch (when not nil) with the policy logits of
// every state a copy acts in (valid during the call).
func EvaluateWatched(ctx context.Context, env envs.VecEnv, enc Encoder, pol Policy, seedBase int64, maxSteps int, watch func(z []float32)) ([]float64, error) {
	n, D := env.NumEnvs(), enc.Dim()
	req := envs.ResetRequest{Seeds: make([]int64, n)}
	for i := range req.Seeds {
		req.Seeds[i] = seedBase + int64(i)
	}
	obsArr, _, err := env.Reset(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("control: evaluation reset: %w", err)
	}
	obs := make([]float32, n*D)
	for i := range n {
		if err := enc.Encode(obs[i*D:(i+1)*D], obsArr, i); err != nil {
			return nil, err
		}
	}
	h := pol.Layout()
	K := h.NumActions()
	x, z := tensor.New(0, D), make([]float32, K)
	actions := envs.NewArray(envs.Int64, n)
	returns := make([]float64, n)
	done := make([]bool, n)
	live := n
	for t := 0; live > 0 && t < maxSteps; t++ {
		pol.Input(x, obs)
		heads, err := pol.Forward(x)
		if err != nil {
			return nil, fmt.Errorf("control: evaluation: %w", err)
		}
		for i := range n {
			actions.Ints[i] = 0
			if !done[i] {
				h.Logits(z, heads[0].Row(i))
				if watch != nil {
					watch(z)
				}
				actions.Ints[i] = int64(policy.Greedy(z, nil))
			}
		}
		res, err := env.Step(ctx, actions)
		if err != nil {
			return nil, fmt.Errorf("control: evaluation step: %w", err)
		}
		for i := range n {
			if done[i] {
				continue
			}
			returns[i] += res.Rewards[i]
			if err := enc.Encode(obs[i*D:(i+1)*D], res.Obs, i); err != nil {
				return nil, err
			}
			if res.Terminated[i] || res.Truncated[i] {
				done[i] = true
				live--
			}
		}
	}
	return returns, nil
}

// statWindow keeps the policy statistics of the last size on-policy steps.
type statWindow struct {
	maxProb, support []float32
	next, filled     int
}

// WindowState is a statWindow's contents, oldest first.
type WindowState struct {
	MaxProb []float32 `json:"max_prob"`
	Support []float32 `json:"support"`
}

func newStatWindow(size int) statWindow {
	return statWindow{maxProb: make([]float32, size), support: make([]float32, size)}
}

func (w *statWindow) addStats(maxProb, support float32) {
	w.maxProb[w.next], w.support[w.next] = maxProb, support
	w.next = (w.next + 1) % len(w.maxProb)
	w.filled = min(w.filled+1, len(w.maxProb))
}

func (w *statWindow) means() (float64, float64) {
	if w.filled == 0 {
		return 0, 0
	}
	var a, b float64
	for i := range w.filled {
		a += float64(w.maxProb[i])
		b += float64(w.support[i])
	}
	return a / float64(w.filled), b / float64(w.filled)
}

func (w *statWindow) state() WindowState {
	var st WindowState
	size := len(w.maxProb)
	start := (w.next - w.filled + size) % size
	for k := range w.filled {
		j := (start + k) % size
		st.MaxProb = append(st.MaxProb, w.maxProb[j])
		st.Support = append(st.Support, w.support[j])
	}
	return st
}

func (w *statWindow) restore(st WindowState) error {
	if len(st.MaxProb) != len(st.Support) || len(st.MaxProb) > len(w.maxProb) {
		return fmt.Errorf("control: statistics window of %d and %d entries, want equal and <= %d", len(st.MaxProb), len(st.Support), len(w.maxProb))
	}
	copy(w.maxProb, st.MaxProb)
	copy(w.support, st.Support)
	w.filled = len(st.MaxProb)
	w.next = w.filled % len(w.maxProb)
	return nil
}
