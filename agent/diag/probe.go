package diag

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/episode"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/replay"
	"github.com/sparsepcl/sparsepcl/agent/rollout"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs"
)

// Options are the probe's knobs that are not training hyperparameters.
type Options struct {
	Registry *envs.Registry
	Engine   *tensor.Engine // nil: resolved from SPARSEPCL_BLAS
	// Every is the inspection period in iterations (each costs about one forward pass of a batch).
	Every int
	// AlphaStart and AlphaDecay, when AlphaStart > 0, schedule the weight as the released code's
	// tau_start/tau_decay: alpha(it) = max(cfg.Alpha, AlphaStart * AlphaDecay^(it/100)).
	AlphaStart, AlphaDecay float64
	// Expert, on Copy, puts that many expert episodes (move right and write the symbol read, at
	// the starting curriculum level) into the replay buffer before the first iteration, as the
	// released code's num_expert_paths did: the symbol mapping is then in the data from the start.
	Expert int
	// CSV receives one row per inspected iteration (nil: none).
	CSV io.Writer
}

// Record is what one inspected iteration measured.
type Record struct {
	Iteration  int
	Alpha      float64
	Curriculum int
	MeanReward float64
	Fresh      Batch // the fresh on-policy batch, before the step on it
	Replay     Batch // the replay batch, before the step on it (zero value without replay)
	// ReplayLen and ReplayRewarded count the buffer's episodes and those with a correct write;
	// ReplayBatchRewarded is the rewarded share of the replay batch.
	ReplayLen, ReplayRewarded int
	ReplayBatchRewarded       float64
	Loss, GradNorm            float64
	// GradShare is the share of the on-policy step's squared gradient norm per parameter group:
	// "logits" (head 0), "value" (the V head), "multipliers" (lambda and Lambda heads), "body".
	GradShare map[string]float64
}

// Alpha is the weight of the schedule at iteration it.
func (o Options) Alpha(base float64, it int) float64 {
	if o.AlphaStart <= 0 {
		return base
	}
	return math.Max(base, o.AlphaStart*math.Pow(o.AlphaDecay, float64(it)/100))
}

type targeter interface{ Target(i int) []int64 }

func targetsOf(env envs.VecEnv) ([][]int64, error) {
	t, ok := env.(targeter)
	if !ok {
		return nil, fmt.Errorf("diag: env %T does not expose its targets", env)
	}
	out := make([][]int64, env.NumEnvs())
	for i := range out {
		out[i] = t.Target(i)
	}
	return out, nil
}

type minLengther interface{ MinLength(i int) int }

// Probe trains cfg for cfg.Iters iterations as agent/train does (without evaluation or
// checkpoints) and inspects every opts.Every-th iteration.
func Probe(ctx context.Context, cfg config.Config, opts Options) ([]Record, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Registry == nil {
		return nil, fmt.Errorf("diag: no registry")
	}
	if opts.Every < 1 {
		opts.Every = 1
	}
	if opts.AlphaStart > 0 && !(opts.AlphaDecay > 0 && opts.AlphaDecay <= 1) {
		return nil, fmt.Errorf("diag: alpha decay %v, want (0, 1]", opts.AlphaDecay)
	}
	eng := opts.Engine
	if eng == nil {
		var err error
		if eng, err = tensor.NewEngine(); err != nil {
			return nil, fmt.Errorf("diag: %w", err)
		}
	}
	env, err := opts.Registry.MakeVec(cfg.Env, cfg.BatchSize, map[string]any{"base": cfg.Base, "autoreset": "disabled",
		"per_copy_curriculum": cfg.Curriculum == config.CurriculumPerCopy})
	if err != nil {
		return nil, fmt.Errorf("diag: %w", err)
	}
	defer env.Close()
	spec, err := rollout.CheckEnv(env)
	if err != nil {
		return nil, fmt.Errorf("diag: %w", err)
	}
	task, err := TaskOf(spec)
	if err != nil {
		return nil, err
	}
	l, err := pcl.NewLearner(cfg, spec, eng)
	if err != nil {
		return nil, fmt.Errorf("diag: %w", err)
	}
	sampler, err := rollout.NewSampler(env, l.Model, cfg.MaxSteps)
	if err != nil {
		return nil, fmt.Errorf("diag: %w", err)
	}
	var buf *replay.Buffer
	if cfg.Replay {
		if buf, err = replay.New(cfg.ReplayCapacity, cfg.ReplayAlpha, cfg.ReplayUniform, cfg.ReplayEviction); err != nil {
			return nil, fmt.Errorf("diag: %w", err)
		}
	}
	if opts.Expert > 0 {
		if buf == nil {
			return nil, fmt.Errorf("diag: expert episodes need replay")
		}
		if err := addExperts(ctx, opts, cfg, task, buf); err != nil {
			return nil, err
		}
	}
	var cw *csv.Writer
	if opts.CSV != nil {
		cw = csv.NewWriter(opts.CSV)
		if err := cw.Write(Header()); err != nil {
			return nil, fmt.Errorf("diag: csv: %w", err)
		}
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed))
	var recs []Record
	for it := 0; it < cfg.Iters; it++ {
		if err := ctx.Err(); err != nil {
			return recs, err
		}
		if err := l.SetAlpha(opts.Alpha(cfg.Alpha, it)); err != nil {
			return recs, err
		}
		inspect := it%opts.Every == 0 || it == cfg.Iters-1
		res, err := sampler.Sample(ctx, rng, false, it, int64(rng.Uint64()>>2))
		if err != nil {
			return recs, fmt.Errorf("diag: iteration %d: %w", it, err)
		}
		rec := Record{Iteration: it, Alpha: l.Alpha(), MeanReward: res.MeanReward}
		if c, ok := env.(minLengther); ok {
			rec.Curriculum = c.MinLength(0)
		}
		if inspect {
			targets, err := targetsOf(env)
			if err != nil {
				return recs, err
			}
			if rec.Fresh, err = Inspect(l.Model, l.Config(), task, res.Episodes, targets); err != nil {
				return recs, err
			}
		}
		info, err := l.TrainStep(res.Episodes)
		if err != nil {
			return recs, fmt.Errorf("diag: iteration %d: %w", it, err)
		}
		rec.Loss, rec.GradNorm = info.Loss, info.GradNorm
		if inspect {
			rec.GradShare = gradShares(l.Params())
		}
		if buf != nil {
			for _, e := range res.Episodes {
				prio := e.TotalReward()
				if cfg.ReplayPriority == config.PriorityRecency {
					prio = float64(e.Iteration)
				}
				if err := buf.Add(rng, e, prio); err != nil {
					return recs, err
				}
			}
			batch := buf.Sample(rng, cfg.EffectiveReplayBatch())
			if inspect {
				rec.ReplayLen = buf.Len()
				rec.ReplayRewarded = buf.Count(rewarded)
				for _, e := range batch {
					if rewarded(e) {
						rec.ReplayBatchRewarded++
					}
				}
				rec.ReplayBatchRewarded /= float64(len(batch))
				// Replayed episodes keep no targets; the correct symbol at a step is recovered
				// from the rewards where the episode wrote it, so only the replay batch's
				// term and weight measures are meaningful.
				if rec.Replay, err = Inspect(l.Model, l.Config(), task, batch, replayTargets(task, batch)); err != nil {
					return recs, err
				}
			}
			if _, err := l.TrainStep(batch); err != nil {
				return recs, fmt.Errorf("diag: iteration %d replay step: %w", it, err)
			}
		}
		if inspect {
			recs = append(recs, rec)
			if cw != nil {
				if err := cw.Write(rec.record()); err != nil {
					return recs, fmt.Errorf("diag: csv: %w", err)
				}
				cw.Flush()
				if err := cw.Error(); err != nil {
					return recs, fmt.Errorf("diag: csv: %w", err)
				}
			}
		}
	}
	return recs, nil
}

// addExperts plays opts.Expert Copy episodes with the expert policy on a fresh env and stores them.
func addExperts(ctx context.Context, opts Options, cfg config.Config, task Task, buf *replay.Buffer) error {
	if cfg.Env != "Copy-v0" {
		return fmt.Errorf("diag: expert episodes are defined for Copy-v0 only, not %s", cfg.Env)
	}
	env, err := opts.Registry.MakeVec(cfg.Env, opts.Expert, map[string]any{"base": cfg.Base, "autoreset": "disabled"})
	if err != nil {
		return fmt.Errorf("diag: %w", err)
	}
	defer env.Close()
	req := envs.ResetRequest{Seeds: make([]int64, opts.Expert)}
	for i := range req.Seeds {
		req.Seeds[i] = 1<<40 + int64(i)
	}
	obs, _, err := env.Reset(ctx, req)
	if err != nil {
		return fmt.Errorf("diag: %w", err)
	}
	eps := make([]*episode.Episode, opts.Expert)
	done := make([]bool, opts.Expert)
	for i := range eps {
		eps[i] = &episode.Episode{Obs: []int32{int32(obs.Ints[i])}, Iteration: -1}
	}
	acts := envs.NewArray(envs.Int64, opts.Expert)
	for live := opts.Expert; live > 0; {
		for i, e := range eps {
			acts.Ints[i] = int64(task.Action(1, 1, min(int(e.Obs[len(e.Obs)-1]), task.Base-1)))
		}
		out, err := env.Step(ctx, acts)
		if err != nil {
			return fmt.Errorf("diag: %w", err)
		}
		for i, e := range eps {
			if done[i] {
				continue
			}
			e.Actions, e.Rewards, e.Obs = append(e.Actions, int32(acts.Ints[i])), append(e.Rewards, out.Rewards[i]), append(e.Obs, int32(out.Obs.Ints[i]))
			if out.Terminated[i] || out.Truncated[i] {
				e.Terminated, e.Truncated, done[i] = out.Terminated[i], !out.Terminated[i], true
				live--
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, e := range eps {
		prio := e.TotalReward()
		if cfg.ReplayPriority == config.PriorityRecency {
			prio = 0
		}
		if err := buf.Add(rng, e, prio); err != nil {
			return err
		}
	}
	return nil
}

func rewarded(e *episode.Episode) bool { return hasPositive(e.Rewards) }

// replayTargets reconstructs what can be known of a stored episode's target: the symbols it wrote
// and was rewarded for, then -1 (due, but unknown) at its wrong write, which ended it.
func replayTargets(task Task, eps []*episode.Episode) [][]int64 {
	out := make([][]int64, len(eps))
	for i, e := range eps {
		for t, a := range e.Actions {
			if w, ch := task.Write(int(a)); w {
				if e.Rewards[t] > 0 {
					out[i] = append(out[i], int64(ch))
					continue
				}
				out[i] = append(out[i], -1) // due but unknown: counts the write as wrong
				break
			}
		}
	}
	return out
}

// scaleLogitHead multiplies head 0's weights and bias by s.
// groupOf names the parameter group of a SeqNet parameter (see Record.GradShare).
func groupOf(name string) string {
	switch {
	case strings.HasPrefix(name, "head0."):
		return "logits"
	case strings.HasPrefix(name, "head1."):
		return "value"
	case strings.HasPrefix(name, "head"):
		return "multipliers"
	}
	return "body"
}

func gradShares(ps []*nn.Param) map[string]float64 {
	out := map[string]float64{"logits": 0, "value": 0, "multipliers": 0, "body": 0}
	total := 0.0
	for _, p := range ps {
		s := 0.0
		for _, g := range p.Grad.Data {
			s += float64(g) * float64(g)
		}
		out[groupOf(p.Name)] += s
		total += s
	}
	if total > 0 {
		for k := range out {
			out[k] /= total
		}
	}
	return out
}

// Header is the CSV header of Record rows.
func Header() []string {
	return []string{"iteration", "alpha", "curriculum", "mean_reward", "rewarded", "write_frac", "p_write", "p_correct",
		"p_correct_given_write", "correct_in_support", "correct_gap", "symbols_in_support", "support", "max_prob", "logit_std", "logit_range", "v",
		"term_policy", "term_lambda", "term_big_lambda", "lambda_scale", "adv_correct", "adv_wrong", "adv_nowrite",
		"replay_len", "replay_rewarded", "replay_batch_rewarded", "replay_adv_correct", "replay_adv_wrong",
		"replay_term_lambda", "replay_lambda_scale", "loss", "grad_norm", "grad_logits", "grad_value", "grad_multipliers", "grad_body"}
}

func (r Record) record() []string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', 5, 64) }
	b := r.Fresh
	return []string{strconv.Itoa(r.Iteration), f(r.Alpha), strconv.Itoa(r.Curriculum), f(r.MeanReward), f(b.Rewarded), f(b.WriteFrac),
		f(b.PWrite), f(b.PCorrect), f(b.PCorrectGivenWrite), f(b.CorrectInSupport), f(b.CorrectGap), strconv.Itoa(b.SymbolsInSupport), f(b.Support), f(b.MaxProb), f(b.LogitStd),
		f(b.LogitRange), f(b.V), f(b.TermPolicy), f(b.TermLambda), f(b.TermBigLambda), f(b.LambdaScale), f(b.AdvCorrect),
		f(b.AdvWrong), f(b.AdvNoWrite), strconv.Itoa(r.ReplayLen), strconv.Itoa(r.ReplayRewarded), f(r.ReplayBatchRewarded),
		f(r.Replay.AdvCorrect), f(r.Replay.AdvWrong), f(r.Replay.TermLambda), f(r.Replay.LambdaScale),
		f(r.Loss), f(r.GradNorm), f(r.GradShare["logits"]), f(r.GradShare["value"]), f(r.GradShare["multipliers"]), f(r.GradShare["body"])}
}
