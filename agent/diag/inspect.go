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
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/policy"
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
func TaskOf(spec pcl.Spec) (Task, error) {
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
func Inspect(m *pcl.Model, cfg config.Config, task Task, eps []*episode.Episode, targets [][]int64) (Batch, error) {
	B := len(eps)
	if B == 0 || len(targets) != B {
		return Batch{}, fmt.Errorf("diag: %d episodes and %d targets", B, len(targets))
	}
	spec := m.Spec
	F, K := spec.Features(), spec.NumActions()
	T := 0
	for _, e := range eps {
		if err := e.Validate(episode.TokenDim); err != nil {
			return Batch{}, fmt.Errorf("diag: %w", err)
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
		return Batch{}, fmt.Errorf("diag: forward: %w", err)
	}
	in := pcl.PathInputs{T: T, B: B, Lengths: make([]int, B), Terminated: make([]bool, B),
		Values: make([]float64, Tn*B), Rewards: make([]float64, T*B), Terms: make([]float64, T*B)}
	p, z, dz := make([]float32, K), make([]float32, K), make([]float32, K)
	_, soft := m.Algo.(pcl.Soft) // soft PCL has no multipliers and no threshold gap
	var s Batch
	s.Episodes = B
	s.V = math.NaN()
	var vSum float64
	var steps, givenN, gapN int
	symStates, symIn := make([]int, task.Base), make([]int, task.Base)
	for b, e := range eps {
		L := e.Len()
		in.Lengths[b], in.Terminated[b] = L, e.Terminated
		if e.TotalReward() > 0 || hasPositive(e.Rewards) {
			s.Rewarded++
		}
		wp := 0
		for t := 0; t <= L; t++ {
			row := t*B + b
			tau := m.Probs(p, z, heads[0].Row(row))
			if m.VHead >= 0 {
				in.Values[row] = float64(heads[m.VHead].Data[row])
			} else {
				in.Values[row] = m.Alpha * policy.EntmaxConjugateFromProbs(z, p, nil, m.Algo.Q())
			}
			if t == L {
				continue
			}
			a := int(e.Actions[t])
			in.Rewards[row] = e.Rewards[t]
			steps++
			s.Reward += e.Rewards[t]
			var c float64
			switch m.Algo.(type) {
			case pcl.Soft:
				c = -m.Alpha * (float64(z[a]) - tau)
				s.TermPolicy += c
			case pcl.Sparse:
				hl, hb := float64(heads[m.LambdaHead].Data[row]), float64(heads[m.BigHead].Data[row])
				r := policy.SparseStep(dz, policy.SparseRow[float32]{Z: z, P: p, Tau: tau}, a, m.Alpha, hl, hb, 0)
				c = r.Value
				s.TermPolicy += m.Alpha/2 - m.Alpha*r.Mu
				s.TermLambda += r.Lambda
				s.TermBigLambda += -r.BigLambda
				s.LambdaScale += math.Exp(hl)
			default:
				r := policy.TsallisStep(dz, policy.SparseRow[float32]{Z: z, P: p, Tau: tau}, a, m.Algo.Q(), m.Alpha, float64(heads[m.LambdaHead].Data[row]), 0)
				c = r.Value
				s.TermPolicy += r.Value - r.Multiplier
				s.TermLambda += r.Multiplier
				s.LambdaScale += math.Exp(float64(heads[m.LambdaHead].Data[row]))
			}
			in.Terms[row] = c
			w, _ := task.Write(a)
			if wp >= len(targets[b]) {
				if w {
					wp++
				}
				continue
			}
			due := int(targets[b][wp])
			s.States++
			vSum += in.Values[row]
			if w {
				s.WriteFrac++
			}
			var pw, pc float64
			inSup := false
			zc := math.Inf(-1)
			for act, pa := range p {
				if ww, ch := task.Write(act); ww {
					pw += float64(pa)
					if ch == due {
						pc += float64(pa)
						inSup = inSup || pa > 0
						zc = math.Max(zc, float64(z[act]))
					}
				}
			}
			if due >= 0 && due < task.Base {
				symStates[due]++
				if inSup {
					symIn[due]++
				}
			}
			if !inSup && due >= 0 && !soft {
				s.CorrectGap += tau - zc
				gapN++
			}
			s.PWrite += pw
			s.PCorrect += pc
			if pw > 0 {
				s.PCorrectGivenWrite += pc / pw
				givenN++
			}
			if inSup {
				s.CorrectInSupport++
			}
			k, mx := 0, float32(0)
			var zs, zs2 float64
			zmin, zmax := math.Inf(1), math.Inf(-1)
			for i, v := range p {
				if v > 0 {
					k++
				}
				mx = max(mx, v)
				zi := float64(z[i])
				zs += zi
				zs2 += zi * zi
				zmin, zmax = math.Min(zmin, zi), math.Max(zmax, zi)
			}
			s.Support += float64(k)
			s.MaxProb += float64(mx)
			mean := zs / float64(K)
			s.LogitStd += math.Sqrt(math.Max(0, zs2/float64(K)-mean*mean))
			s.LogitRange += zmax - zmin
			if w {
				wp++
			}
		}
	}
	g := pcl.PathGrads{}
	if _, err := pcl.PathLoss(in, cfg.Gamma, cfg.Rollout, &g); err != nil {
		return Batch{}, fmt.Errorf("diag: %w", err)
	}
	// Loss weights per kind of taken action (only while a symbol is due).
	for b, e := range eps {
		wp := 0
		for t, a32 := range e.Actions {
			w, ch := task.Write(int(a32))
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
	s.Rewarded /= float64(B)
	div := func(x *float64, n int) {
		if n == 0 {
			*x = math.NaN()
			return
		}
		*x /= float64(n)
	}
	for _, x := range []*float64{&s.Reward, &s.TermPolicy, &s.TermLambda, &s.TermBigLambda, &s.LambdaScale} {
		div(x, steps)
	}
	for _, x := range []*float64{&s.WriteFrac, &s.PWrite, &s.PCorrect, &s.CorrectInSupport, &s.Support, &s.MaxProb, &s.LogitStd, &s.LogitRange} {
		div(x, s.States)
	}
	div(&s.PCorrectGivenWrite, givenN)
	div(&s.CorrectGap, gapN)
	for c := range symStates {
		if symStates[c] > 0 && 2*symIn[c] >= symStates[c] {
			s.SymbolsInSupport++
		}
	}
	div(&s.AdvCorrect, s.NCorrect)
	div(&s.AdvWrong, s.NWrong)
	div(&s.AdvNoWrite, s.NNoWrite)
	if s.States > 0 {
		s.V = vSum / float64(s.States)
	}
	if soft {
		s.TermLambda, s.TermBigLambda, s.LambdaScale = math.NaN(), math.NaN(), math.NaN()
	}
	return s, nil
}

func hasPositive(r []float64) bool {
	for _, x := range r {
		if x > 0 {
			return true
		}
	}
	return false
}
