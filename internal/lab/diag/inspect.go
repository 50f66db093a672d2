// Package diag instruments PCL training on the algorithmic tasks, to find out why a run does not
// learn: what the policy does at the states where a symbol is due (how often it writes, how much
// mass it puts on the correct symbol, whether that symbol is inside a sparse policy's support),
// how large its logits are, what each part of the per-step consistency term weighs, which actions
// the loss reinforces, and what the replay buffer holds. Probe trains through agent/train's one
// loop (fresh batch, on-policy step, replay, replay step; the same run as train.Run's, bit for
// bit), watching it as a train.Observer that records these measures every few iterations, with
// the knobs that the diagnosis needs (an alpha schedule, expert episodes in the replay buffer).
package diag

import (
	"fmt"
	"math"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/episode"
	"github.com/sparsepcl/sparsepcl/agent/model/lstm"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/policy"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Batch summarises the policy on one batch of episodes. State means run over the visited states at
// which a target symbol is still due (the write position is inside the target); the action means
// over the actions taken there.
type Batch struct {
	Episodes int
	Rewarded float64 // fraction of episodes with at least one correct write
	States   int     // visited states with a symbol due

	WriteFrac float64 // fraction of taken actions that write
	PWrite    float64 // mean policy mass on the write actions
	PCorrect  float64 // mean policy mass on writing the due symbol (any move)
	// PCorrectGivenWrite is the mean of PCorrect/PWrite over states with PWrite > 0: whether the
	// policy knows which symbol to write, apart from whether it writes.
	PCorrectGivenWrite float64
	CorrectInSupport   float64 // fraction of states where some correct write has pi > 0
	// CorrectGap is the mean of G(z) - max_move z(move, write, due) over the states where no
	// correct write is in the support: how far the correct action is from entering it (sparse).
	CorrectGap float64
	// SymbolsInSupport is the number of symbols c for which, at the states where c is due, a
	// correct write is in the support at least half the time.
	SymbolsInSupport int
	Support, MaxProb float64

	LogitStd   float64 // mean over states of the standard deviation of the |A| logits
	LogitRange float64 // mean over states of max - min of the logits

	V float64 // mean V over the states (separate form; NaN in the unified form)
	// Mean parts of the per-step term c at the taken actions: the reward, alpha/2 - alpha*mu (or
	// -tau log pi for soft), lambda(a|x), -Lambda(x); and the multiplier scale exp(head).
	Reward, TermPolicy, TermLambda, TermBigLambda, LambdaScale float64

	// Mean loss weight dL/dc over the taken actions of each kind: correct writes, wrong writes,
	// no-writes. Positive reinforces the action (descent lowers c, raising mu or log pi). Weights
	// are those of the loss C^2/2 before the policy scale.
	AdvCorrect, AdvWrong, AdvNoWrite float64
	NCorrect, NWrong, NNoWrite       int
}

// Task knows the action encoding: a = move + M*write + 2M*char.
type Task struct{ Moves, Base int }

// TaskOf reads the action components (move, write, char) of a spec.
func TaskOf(spec lstm.Spec) (Task, error) {
	c := spec.ActionComponents
	if len(c) != 3 || c[1] != 2 {
		return Task{}, fmt.Errorf("diag: action components %v are not (move, write, char)", c)
	}
	return Task{Moves: c[0], Base: c[2]}, nil
}

// Write reports whether action a writes, and its symbol.
func (t Task) Write(a int) (bool, int) {
	return (a/t.Moves)%2 == 1, a / (2 * t.Moves)
}

// Action returns the combined action (move, write, char).
func (t Task) Action(move, write, char int) int { return move + t.Moves*write + 2*t.Moves*char }

// Inspect evaluates the model on eps (targets[i] is the target of episode i) and summarises it.
// alpha is the regularisation weight, gamma and rollout those of the loss.
func Inspect(m *lstm.Model, cfg config.Config, task Task, eps []*episode.Episode, targets [][]int64) (Batch, error) {
	B := len(eps)
	if B == 0 || len(targets) != B {
		return Batch{}, fmt.Errorf("diag: %d episodes and %d targets", B, len(targets))
	}
	heads, T, err := forward(m, eps)
	if err != nil {
		return Batch{}, err
	}
	in := pcl.PathInputs{T: T, B: B, Lengths: make([]int, B), Terminated: make([]bool, B),
		Values: make([]float64, (T+1)*B), Rewards: make([]float64, T*B), Terms: make([]float64, T*B)}
	a := newInspector(m, task, B)
	for b, e := range eps {
		a.episode(heads, &in, b, e, targets[b])
	}
	g := pcl.PathGrads{}
	if _, err := pcl.PathLoss(in, cfg.Gamma, cfg.Rollout, &g); err != nil {
		return Batch{}, fmt.Errorf("diag: %w", err)
	}
	a.advantages(eps, targets, g)
	return a.finish(), nil
}

// forward runs the model over eps (checked) as one time-major batch and returns its heads and
// the longest episode's length T.
func forward(m *lstm.Model, eps []*episode.Episode) ([]*tensor.Matrix, int, error) {
	B := len(eps)
	spec := m.Spec
	F := spec.Features()
	T := 0
	for _, e := range eps {
		if err := e.Validate(episode.TokenDim); err != nil {
			return nil, 0, fmt.Errorf("diag: %w", err)
		}
		T = max(T, e.Len())
	}
	Tn := T + 1
	tokens := make([]int32, Tn*B*F)
	lengths := make([]int, B)
	for b, e := range eps {
		lengths[b] = e.Len() + 1
		for t := 0; t <= e.Len(); t++ {
			row := tokens[(t*B+b)*F : (t*B+b+1)*F]
			row[0] = e.Obs[t]
			prev := -1
			if t > 0 {
				prev = int(e.Actions[t-1])
			}
			spec.PrevActionTokens(row[1:], prev)
		}
	}
	heads, err := m.Net.Forward(tokens, Tn, B, lengths)
	if err != nil {
		return nil, 0, fmt.Errorf("diag: forward: %w", err)
	}
	return heads, T, nil
}

// inspector accumulates a Batch over the rows of one forward pass.
type inspector struct {
	m    *lstm.Model
	task Task
	B    int
	soft bool // soft PCL has no multipliers and no threshold gap

	s                   Batch
	vSum                float64
	steps, givenN, gapN int
	symStates, symIn    []int
	p, z, dz            []float32
}

func newInspector(m *lstm.Model, task Task, B int) *inspector {
	K := m.Spec.NumActions()
	_, soft := m.Algo.(pcl.Soft)
	a := &inspector{m: m, task: task, B: B, soft: soft, symStates: make([]int, task.Base), symIn: make([]int, task.Base),
		p: make([]float32, K), z: make([]float32, K), dz: make([]float32, K)}
	a.s.Episodes = B
	a.s.V = math.NaN()
	return a
}

// episode fills in's rows of episode b and adds its steps to the sums: V and the per-step term
// of every step, and the state measures while a symbol of target is due.
func (a *inspector) episode(heads []*tensor.Matrix, in *pcl.PathInputs, b int, e *episode.Episode, target []int64) {
	m, B := a.m, a.B
	L := e.Len()
	in.Lengths[b], in.Terminated[b] = L, e.Terminated
	if e.TotalReward() > 0 || hasPositive(e.Rewards) {
		a.s.Rewarded++
	}
	wp := 0
	for t := 0; t <= L; t++ {
		row := t*B + b
		tau := m.Probs(a.p, a.z, heads[0].Row(row))
		if m.VHead >= 0 {
			in.Values[row] = float64(heads[m.VHead].Data[row])
		} else {
			in.Values[row] = m.Alpha * policy.EntmaxConjugateFromProbs(a.z, a.p, nil, m.Algo.Q())
		}
		if t == L {
			continue
		}
		act := int(e.Actions[t])
		in.Rewards[row] = e.Rewards[t]
		a.steps++
		a.s.Reward += e.Rewards[t]
		in.Terms[row] = a.stepTerm(heads, row, act, tau)
		w, _ := a.task.Write(act)
		if wp < len(target) {
			a.dueState(int(target[wp]), w, tau, in.Values[row])
		}
		if w {
			wp++
		}
	}
}

// stepTerm is the per-step term at row for the taken action act, its parts added to the sums.
func (a *inspector) stepTerm(heads []*tensor.Matrix, row, act int, tau float64) float64 {
	m, s := a.m, &a.s
	row32 := policy.SparseRow[float32]{Z: a.z, P: a.p, Tau: tau}
	switch m.Algo.(type) {
	case pcl.Soft:
		c := -m.Alpha * (float64(a.z[act]) - tau)
		s.TermPolicy += c
		return c
	case pcl.Sparse:
		hl, hb := float64(heads[m.LambdaHead].Data[row]), float64(heads[m.BigHead].Data[row])
		r := policy.SparseStep(a.dz, row32, act, m.Alpha, hl, hb, 0)
		s.TermPolicy += m.Alpha/2 - m.Alpha*r.Mu
		s.TermLambda += r.Lambda
		s.TermBigLambda += -r.BigLambda
		s.LambdaScale += math.Exp(hl)
		return r.Value
	default:
		r := policy.TsallisStep(a.dz, row32, act, m.Algo.Q(), m.Alpha, float64(heads[m.LambdaHead].Data[row]), 0)
		s.TermPolicy += r.Value - r.Multiplier
		s.TermLambda += r.Multiplier
		s.LambdaScale += math.Exp(float64(heads[m.LambdaHead].Data[row]))
		return r.Value
	}
}

// dueState adds one state at which symbol due is to be written (the policy in a.p and a.z, its
// threshold tau, V there v; w: the taken action writes).
func (a *inspector) dueState(due int, w bool, tau, v float64) {
	s, task := &a.s, a.task
	s.States++
	a.vSum += v
	if w {
		s.WriteFrac++
	}
	var pw, pc float64
	inSup := false
	zc := math.Inf(-1)
	for act, pa := range a.p {
		if ww, ch := task.Write(act); ww {
			pw += float64(pa)
			if ch == due {
				pc += float64(pa)
				inSup = inSup || pa > 0
				zc = math.Max(zc, float64(a.z[act]))
			}
		}
	}
	if due >= 0 && due < task.Base {
		a.symStates[due]++
		if inSup {
			a.symIn[due]++
		}
	}
	if !inSup && due >= 0 && !a.soft {
		s.CorrectGap += tau - zc
		a.gapN++
	}
	s.PWrite += pw
	s.PCorrect += pc
	if pw > 0 {
		s.PCorrectGivenWrite += pc / pw
		a.givenN++
	}
	if inSup {
		s.CorrectInSupport++
	}
	a.logitStats()
}

// logitStats adds the state's support size, max-prob and logit spread.
func (a *inspector) logitStats() {
	s := &a.s
	k, mx := 0, float32(0)
	var zs, zs2 float64
	zmin, zmax := math.Inf(1), math.Inf(-1)
	for i, v := range a.p {
		if v > 0 {
			k++
		}
		mx = max(mx, v)
		zi := float64(a.z[i])
		zs += zi
		zs2 += zi * zi
		zmin, zmax = math.Min(zmin, zi), math.Max(zmax, zi)
	}
	s.Support += float64(k)
	s.MaxProb += float64(mx)
	mean := zs / float64(len(a.p))
	s.LogitStd += math.Sqrt(math.Max(0, zs2/float64(len(a.p))-mean*mean))
	s.LogitRange += zmax - zmin
}

// advantages adds the loss weights per kind of taken action (only while a symbol is due).
func (a *inspector) advantages(eps []*episode.Episode, targets [][]int64, g pcl.PathGrads) {
	s, B := &a.s, a.B
	for b, e := range eps {
		wp := 0
		for t, a32 := range e.Actions {
			w, ch := a.task.Write(int(a32))
			if wp < len(targets[b]) {
				d := g.DTerms[t*B+b] * float64(B) // per episode, not per batch
				switch {
				case !w:
					s.AdvNoWrite += d
					s.NNoWrite++
				case ch == int(targets[b][wp]):
					s.AdvCorrect += d
					s.NCorrect++
				default:
					s.AdvWrong += d
					s.NWrong++
				}
			}
			if w {
				wp++
			}
		}
	}
}

// finish turns the sums into means.
func (a *inspector) finish() Batch {
	s := a.s
	s.Rewarded /= float64(a.B)
	div := func(x *float64, n int) {
		if n == 0 {
			*x = math.NaN()
			return
		}
		*x /= float64(n)
	}
	for _, x := range []*float64{&s.Reward, &s.TermPolicy, &s.TermLambda, &s.TermBigLambda, &s.LambdaScale} {
		div(x, a.steps)
	}
	for _, x := range []*float64{&s.WriteFrac, &s.PWrite, &s.PCorrect, &s.CorrectInSupport, &s.Support, &s.MaxProb, &s.LogitStd, &s.LogitRange} {
		div(x, s.States)
	}
	div(&s.PCorrectGivenWrite, a.givenN)
	div(&s.CorrectGap, a.gapN)
	for c := range a.symStates {
		if a.symStates[c] > 0 && 2*a.symIn[c] >= a.symStates[c] {
			s.SymbolsInSupport++
		}
	}
	div(&s.AdvCorrect, s.NCorrect)
	div(&s.AdvWrong, s.NWrong)
	div(&s.AdvNoWrite, s.NNoWrite)
	if s.States > 0 {
		s.V = a.vSum / float64(s.States)
	}
	if a.soft {
		s.TermLambda, s.TermBigLambda, s.LambdaScale = math.NaN(), math.NaN(), math.NaN()
	}
	return s
}

func hasPositive(r []float64) bool {
	for _, x := range r {
		if x > 0 {
			return true
		}
	}
	return false
}
