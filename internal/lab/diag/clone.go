package diag

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/episode"
	"github.com/sparsepcl/sparsepcl/agent/model/lstm"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/nn/optim"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
)

// CloneOptions configure Clone: behaviour cloning of a task's scripted expert with the run's own
// network (the LSTM, its heads and its input encoding, from Config), trained by cross-entropy on
// the expert's actions. It answers "can the network represent the expert?" apart from
// everything PCL adds (the consistency, the exploration, the replay).
type CloneOptions struct {
	// Config gives the task (Env, Base) and the network (Hidden, EmbedStd, Seed, the heads of
	// its Algo and Form) and the optimiser (LearningRate, ClipNorm).
	Config config.Config
	Engine *tensor.Engine
	// Episodes is the number of expert episodes per batch; Iters the number of batches (each
	// drawn fresh); Every the evaluation period.
	Episodes, Iters, Every int
	// MinWidth and MaxWidth bound the input widths drawn uniformly for training; the evaluation
	// plays widths MinWidth..EvalWidth (EvalWidth 0: MaxWidth).
	MinWidth, MaxWidth, EvalWidth int
	// EvalInputs is the number of held-out inputs per evaluated width (default 50).
	EvalInputs int
	// CSV receives one row per evaluation (nil: none).
	CSV io.Writer
}

// CloneRecord is one evaluation of the cloned policy.
type CloneRecord struct {
	Iteration int
	// Loss is the mean cross-entropy per step of the last batch.
	Loss float64
	// StepAccuracy is the share of a held-out batch's steps whose greedy action under teacher
	// forcing (the expert's own previous steps as input) is the expert's.
	StepAccuracy float64
	// Solved[w] is the share of held-out inputs of width MinWidth+w that the greedy policy, run
	// free in the env, solves (return = len(target)); MeanSolved averages them.
	Solved     []float64
	MeanSolved float64
}

// ExpertEpisode plays task's expert on one input of width cols drawn from rng and returns the
// episode, as the sampler records it.
func ExpertEpisode(env *algorithmic.Env, rng *rand.Rand, cols int) (*episode.Episode, error) {
	input := randomInput(env, rng, cols)
	expert, err := algorithmic.NewExpert(env.Task(), env.Base())
	if err != nil {
		return nil, err
	}
	obs, _, err := env.Reset(nil, map[string]any{algorithmic.OptInput: input})
	if err != nil {
		return nil, fmt.Errorf("diag: expert episode: %w", err)
	}
	e := &episode.Episode{Obs: []int32{int32(obs.(int64))}}
	for {
		a, err := env.Combine(expert.Act(obs.(int64)))
		if err != nil {
			return nil, err
		}
		o, r, term, trunc, _, err := env.Step(a)
		if err != nil {
			return nil, fmt.Errorf("diag: expert episode: %w", err)
		}
		obs = o
		e.Obs, e.Actions, e.Rewards = append(e.Obs, int32(o.(int64))), append(e.Actions, int32(a)), append(e.Rewards, r)
		if term || trunc {
			e.Terminated = term
			return e, nil
		}
	}
}

// randomInput draws an input of cols columns (symbols on the tape) for env's task.
func randomInput(env *algorithmic.Env, rng *rand.Rand, cols int) any {
	base := int64(env.Base())
	if !env.Task().Grid() {
		in := make([]int64, cols)
		for i := range in {
			in[i] = rng.Int64N(base)
		}
		return in
	}
	in := make([][]int64, cols)
	for x := range in {
		in[x] = make([]int64, env.Task().Rows())
		for y := range in[x] {
			in[x][y] = rng.Int64N(base)
		}
	}
	return in
}

// Clone trains the run's network to imitate the expert and evaluates it every opts.Every
// iterations (and after the last).
func Clone(ctx context.Context, opts CloneOptions) ([]CloneRecord, error) {
	cfg := opts.Config
	task, err := algorithmic.TaskByID(cfg.Env)
	if err != nil {
		return nil, fmt.Errorf("diag: clone: %w", err)
	}
	if err := opts.complete(); err != nil {
		return nil, err
	}
	env, err := algorithmic.NewEnv(algorithmic.Config{Task: task, Base: cfg.Base})
	if err != nil {
		return nil, fmt.Errorf("diag: clone: %w", err)
	}
	spec := lstm.Spec{ObsVocab: cfg.Base + 1, ActionComponents: intsOf(env.ActionComponents())}
	eng := opts.Engine
	if eng == nil {
		if eng, err = tensor.NewEngine(); err != nil {
			return nil, err
		}
	}
	m, err := lstm.New(cfg, spec, eng)
	if err != nil {
		return nil, err
	}
	opt, err := optim.NewAdam(m.Params(), optim.AdamConfig{LearningRate: cfg.LearningRate, Beta1: cfg.AdamBeta1, Beta2: cfg.AdamBeta2, Epsilon: cfg.AdamEps})
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0xc10e))
	evalRng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0xe7a1))
	held, err := expertBatch(env, evalRng, opts.Episodes, opts.MinWidth, opts.MaxWidth)
	if err != nil {
		return nil, err
	}
	if err := opts.writeHeader(); err != nil {
		return nil, err
	}
	var recs []CloneRecord
	for it := range opts.Iters {
		if err := ctx.Err(); err != nil {
			return recs, err
		}
		batch, err := expertBatch(env, rng, opts.Episodes, opts.MinWidth, opts.MaxWidth)
		if err != nil {
			return recs, err
		}
		loss, _, err := cloneLoss(m, batch, true)
		if err != nil {
			return recs, fmt.Errorf("diag: clone iteration %d: %w", it, err)
		}
		optim.ClipGlobalNorm(m.Params(), cfg.ClipNorm)
		if err := opt.Step(); err != nil {
			return recs, fmt.Errorf("diag: clone iteration %d: %w", it, err)
		}
		if (it+1)%opts.Every != 0 && it+1 != opts.Iters {
			continue
		}
		_, acc, err := cloneLoss(m, held, false)
		if err != nil {
			return recs, err
		}
		rec := CloneRecord{Iteration: it + 1, Loss: loss, StepAccuracy: acc}
		for w := opts.MinWidth; w <= opts.EvalWidth; w++ {
			s, err := greedySolved(m, env, evalRng, w, opts.EvalInputs)
			if err != nil {
				return recs, err
			}
			rec.Solved = append(rec.Solved, s)
			rec.MeanSolved += s / float64(opts.EvalWidth-opts.MinWidth+1)
		}
		recs = append(recs, rec)
		if opts.CSV != nil {
			if _, err := fmt.Fprintf(opts.CSV, "%d,%.6g,%.4f,%.4f%s\n", rec.Iteration, rec.Loss, rec.StepAccuracy, rec.MeanSolved, csvTail(rec.Solved)); err != nil {
				return recs, fmt.Errorf("diag: clone csv: %w", err)
			}
		}
	}
	return recs, nil
}

// complete checks the options' sizes and fills in the defaults of those left zero.
func (opts *CloneOptions) complete() error {
	if opts.MinWidth < 1 || opts.MaxWidth < opts.MinWidth || opts.Episodes < 1 || opts.Iters < 1 {
		return fmt.Errorf("diag: clone: widths %d-%d, %d episodes, %d iterations: want 1 <= min <= max and positive counts",
			opts.MinWidth, opts.MaxWidth, opts.Episodes, opts.Iters)
	}
	if opts.EvalWidth == 0 {
		opts.EvalWidth = opts.MaxWidth
	}
	if opts.EvalInputs == 0 {
		opts.EvalInputs = 50
	}
	if opts.Every <= 0 {
		opts.Every = opts.Iters
	}
	return nil
}

// writeHeader writes the CSV's header line, if there is a CSV.
func (opts *CloneOptions) writeHeader() error {
	if opts.CSV == nil {
		return nil
	}
	head := "iteration,loss,step_accuracy,mean_solved"
	for w := opts.MinWidth; w <= opts.EvalWidth; w++ {
		head += fmt.Sprintf(",solved_w%d", w)
	}
	if _, err := fmt.Fprintln(opts.CSV, head); err != nil {
		return fmt.Errorf("diag: clone csv: %w", err)
	}
	return nil
}

func expertBatch(env *algorithmic.Env, rng *rand.Rand, n, lo, hi int) ([]*episode.Episode, error) {
	out := make([]*episode.Episode, n)
	for i := range out {
		e, err := ExpertEpisode(env, rng, lo+rng.IntN(hi-lo+1))
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// cloneLoss is the mean cross-entropy of the softmax of head 0 against the episodes' actions and
// the share of steps whose argmax is the action; with grad it leaves the gradient in the params.
func cloneLoss(m *lstm.Model, batch []*episode.Episode, grad bool) (loss, acc float64, err error) {
	heads, steps, err := m.ForwardBatch(batch)
	if err != nil {
		return 0, 0, err
	}
	B := steps.B
	dHeads := make([]*tensor.Matrix, len(heads))
	for i, h := range heads {
		dHeads[i] = tensor.New(h.Rows, h.Cols)
	}
	n := 0
	for _, L := range steps.Lengths {
		n += L
	}
	correct := 0
	for b := range B {
		for t := range steps.Lengths[b] {
			row := t*B + b
			z := heads[0].Row(row)
			a := int(steps.Actions[row])
			mx, arg := float32(math.Inf(-1)), 0
			for j, v := range z {
				if v > mx {
					mx, arg = v, j
				}
			}
			if arg == a {
				correct++
			}
			sum := 0.0
			for _, v := range z {
				sum += math.Exp(float64(v - mx))
			}
			loss += math.Log(sum) - float64(z[a]-mx)
			if grad {
				d := dHeads[0].Row(row)
				for j, v := range z {
					d[j] = float32(math.Exp(float64(v-mx)) / sum / float64(n))
				}
				d[a] -= float32(1 / float64(n))
			}
		}
	}
	if grad {
		nn.ZeroGrads(m.Params())
		if err := m.Backward(dHeads); err != nil {
			return 0, 0, err
		}
	}
	return loss / float64(n), float64(correct) / float64(n), nil
}

// greedySolved plays n inputs of width cols with the greedy policy (argmax of head 0) and
// returns the share solved.
func greedySolved(m *lstm.Model, env *algorithmic.Env, rng *rand.Rand, cols, n int) (float64, error) {
	state := m.Net.NewState(1)
	F := m.Spec.Features()
	tokens := make([]int32, F)
	var heads []*tensor.Matrix
	for _, s := range m.Net.Config().HeadSizes {
		heads = append(heads, tensor.New(1, s))
	}
	solved := 0
	for range n {
		obs, _, err := env.Reset(nil, map[string]any{algorithmic.OptInput: randomInput(env, rng, cols)})
		if err != nil {
			return 0, err
		}
		clear(state.H.Data)
		clear(state.C.Data)
		prev, total := -1, 0.0
		for {
			tokens[0] = int32(obs.(int64))
			m.Spec.PrevActionTokens(tokens[1:], prev)
			if err := m.Net.Step(state, tokens, heads); err != nil {
				return 0, err
			}
			z := heads[0].Row(0)
			arg := 0
			for j, v := range z {
				if v > z[arg] {
					arg = j
				}
			}
			o, r, term, trunc, _, err := env.Step(int64(arg))
			if err != nil {
				return 0, err
			}
			obs, prev, total = o, arg, total+r
			if term || trunc {
				break
			}
		}
		if total == float64(env.TargetLength()) {
			solved++
		}
	}
	return float64(solved) / float64(n), nil
}

func intsOf(v []int64) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

// csvTail is ",v0,v1,..." with two decimals.
func csvTail(v []float64) string {
	var b strings.Builder
	for _, x := range v {
		fmt.Fprintf(&b, ",%.2f", x)
	}
	return b.String()
}
