package diag

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/episode"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
)

// Options are the probe's knobs that are not training hyperparameters.
type Options struct {
	Registry *envs.Registry
	Engine   *tensor.Engine // nil: resolved from SPARSEPCL_BLAS
	// Every is the inspection period in iterations (each costs about one forward pass of a batch).
	Every int
	// AlphaStart and AlphaDecay, when AlphaStart > 0, schedule the weight as the released code's
	// tau_start/tau_decay: alpha(it) = max(cfg.Alpha, AlphaStart * AlphaDecay^(it/100)); they
	// replace cfg's AlphaStart and AlphaDecay.
	AlphaStart, AlphaDecay float64
	// Expert puts that many episodes of the task's scripted expert (algorithmic.Expert, at the
	// starting curriculum level; with From, at the run's) into the replay buffer before the first
	// iteration, as the released code's num_expert_paths did: the optimal behaviour (on Copy, the
	// symbol mapping) is then in the data from the start. At the run's level they are as long, and as rewarded, as the
	// episodes a trained policy fills the replay with; at the starting level a replay prioritised
	// by reward would hardly draw them.
	Expert int
	// CSV receives one row per inspected iteration (nil: none).
	CSV io.Writer
	// From, when set, is a run directory written by train.Run: the probe continues that run
	// from its checkpoint, with the config it saved (cfg gives only the number of iterations
	// more, cfg.Iters), in a copy of it in Dir, so the trained state can be probed with expert
	// data (what the learner does with data it has not been sampling) and the source is untouched.
	From string
	// Dir, with From, is where the copy is made and trained; it is kept, so pcl play and pcl eval
	// can read the probed policy. It must not exist yet.
	Dir string
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

// Probe trains cfg for cfg.Iters iterations through agent/train's loop (train.Run, without
// evaluation or checkpoints, in a temporary directory that is removed; with Options.From, the
// iterations after that run's checkpoint, in Options.Dir) and inspects every opts.Every-th
// iteration and the last. Options.AlphaStart, when > 0, replaces cfg's weight schedule. An error
// is train.Run's, which names the iteration and stage; a cancelled ctx returns the records
// inspected so far with ctx's error.
func Probe(ctx context.Context, cfg config.Config, opts Options) ([]Record, error) {
	run := train.Options{Registry: opts.Registry, Engine: opts.Engine, Logger: slog.New(slog.DiscardHandler)}
	expertLevel := 0 // the env's starting level
	if opts.From != "" {
		more := cfg.Iters
		var err error
		if cfg, err = continueRun(opts.From, opts.Dir); err != nil {
			return nil, err
		}
		meta, err := runstore.Dir(opts.Dir).Meta()
		if err != nil {
			return nil, fmt.Errorf("diag: %w", err)
		}
		cfg.Iters = meta.Iteration + more
		if c := meta.TrainCurriculum; c != nil && !c.PerCopy && len(c.Curricula) == 1 {
			expertLevel = c.Curricula[0].MinLength
		}
		run.Dir, run.Resume = opts.Dir, true
	}
	if opts.Expert > 0 && !cfg.Replay {
		return nil, fmt.Errorf("diag: expert episodes need replay")
	}
	if opts.AlphaStart > 0 {
		cfg.AlphaStart, cfg.AlphaDecay = opts.AlphaStart, opts.AlphaDecay
	}
	cfg.EvalEvery, cfg.CheckpointEvery = 0, 0
	p := &probe{opts: opts, last: cfg.Iters - 1, expertLevel: expertLevel}
	p.opts.Every = max(p.opts.Every, 1)
	if opts.CSV != nil {
		p.csv = csv.NewWriter(opts.CSV)
		if err := p.write(Header()); err != nil {
			return nil, err
		}
	}
	run.Observer = p
	sum, err := train.Run(ctx, cfg, run)
	if err == nil && sum.Interrupted {
		err = ctx.Err()
	}
	return p.recs, err
}

// continueRun copies the run directory from into dir, which must not exist, and returns the
// config the run saved.
func continueRun(from, dir string) (config.Config, error) {
	if dir == "" {
		return config.Config{}, fmt.Errorf("diag: continuing %s needs a directory for the copy", from)
	}
	if !runstore.Dir(from).HasCheckpoint() {
		return config.Config{}, fmt.Errorf("diag: %s holds no checkpoint to continue", from)
	}
	cfg, err := runstore.Dir(from).Config()
	if err != nil {
		return config.Config{}, fmt.Errorf("diag: %w", err)
	}
	if _, err := os.Stat(dir); err == nil {
		return config.Config{}, fmt.Errorf("diag: %s exists: the copy of %s goes into a new directory", dir, from)
	}
	if err := os.CopyFS(dir, os.DirFS(from)); err != nil {
		return config.Config{}, fmt.Errorf("diag: copy %s: %w", from, err)
	}
	return cfg, nil
}

// probe is Probe's train.Observer: on an inspected iteration it measures the fresh batch and the
// replay batch before the step on each and the on-policy step's gradient, and records them when
// the iteration's training is done.
type probe struct {
	opts Options
	last int // the last iteration, always inspected
	csv  *csv.Writer

	run         train.Watched
	task        Task
	expertLevel int // the expert episodes' curriculum min_length (0: the env's start)

	rec     Record      // the iteration in progress
	inspect bool        // whether it is inspected
	env     envs.VecEnv // the env of its fresh episodes
	recs    []Record
}

// Start reads the task's action encoding and fills the replay buffer with the expert episodes.
func (p *probe) Start(ctx context.Context, run train.Watched) error {
	task, err := TaskOf(run.Spec)
	if err != nil {
		return err
	}
	p.run, p.task = run, task
	if p.opts.Expert == 0 {
		return nil
	}
	return addExperts(ctx, p.opts, run, p.expertLevel)
}

func (p *probe) Sampled(s train.Sample) error {
	p.rec = Record{Iteration: s.Iteration, MeanReward: s.MeanReturn()}
	p.inspect = s.Iteration%p.opts.Every == 0 || s.Iteration == p.last
	p.env = s.Env
	if c, ok := s.Env.(minLengther); ok {
		p.rec.Curriculum = c.MinLength(0)
	}
	return nil
}

// BeforeStep inspects the batch of an inspected iteration's steps: the fresh one with the env's
// targets; the replay batch with what its rewards tell of them, and the buffer's content.
func (p *probe) BeforeStep(s train.Step) error {
	l := p.run.Learner
	p.rec.Alpha = l.Alpha()
	if !p.inspect {
		return nil
	}
	if s.Kind == train.OnPolicyStep {
		targets, err := targetsOf(p.env)
		if err != nil {
			return err
		}
		p.rec.Fresh, err = Inspect(l.Model, l.Config(), p.task, s.Batch, targets)
		return err
	}
	buf := p.run.Replay
	p.rec.ReplayLen, p.rec.ReplayRewarded = buf.Len(), buf.Count(rewarded)
	for _, e := range s.Batch {
		if rewarded(e) {
			p.rec.ReplayBatchRewarded++
		}
	}
	p.rec.ReplayBatchRewarded /= float64(len(s.Batch))
	// Replayed episodes keep no targets; the correct symbol at a step is recovered from the
	// rewards where the episode wrote it, so only the replay batch's term and weight measures
	// are meaningful.
	var err error
	p.rec.Replay, err = Inspect(l.Model, l.Config(), p.task, s.Batch, replayTargets(p.task, s.Batch))
	return err
}

// AfterStep records the on-policy step's loss and, when inspected, its gradient's shares.
func (p *probe) AfterStep(s train.Step, info pcl.StepInfo, _ time.Duration) error {
	if s.Kind != train.OnPolicyStep {
		return nil
	}
	p.rec.Loss, p.rec.GradNorm = info.Loss, info.GradNorm
	if p.inspect {
		p.rec.GradShare = gradShares(p.run.Learner.Params())
	}
	return nil
}

// Trained keeps an inspected iteration's record and writes its CSV row.
func (p *probe) Trained(int) error {
	if !p.inspect {
		return nil
	}
	p.recs = append(p.recs, p.rec)
	if p.csv == nil {
		return nil
	}
	return p.write(p.rec.record())
}

// write writes one CSV row and flushes it, so that an interrupted probe keeps its rows.
func (p *probe) write(row []string) error {
	if err := p.csv.Write(row); err != nil {
		return fmt.Errorf("diag: csv: %w", err)
	}
	p.csv.Flush()
	if err := p.csv.Error(); err != nil {
		return fmt.Errorf("diag: csv: %w", err)
	}
	return nil
}

// addExperts plays opts.Expert episodes of the task's scripted expert (algorithmic.Expert) on a
// fresh env and stores them in the run's replay, with the priority the run gives its own episodes.
func addExperts(ctx context.Context, opts Options, run train.Watched, level int) error {
	cfg := run.Config
	task, err := algorithmic.TaskByID(cfg.Env)
	if err != nil {
		return fmt.Errorf("diag: expert episodes: %w", err)
	}
	env, err := opts.Registry.MakeVec(cfg.Env, opts.Expert, map[string]any{"base": cfg.Base, "autoreset": "disabled"})
	if err != nil {
		return fmt.Errorf("diag: %w", err)
	}
	defer env.Close()
	if err := setExpertLevel(env, opts.Expert, level); err != nil {
		return err
	}
	req := envs.ResetRequest{Seeds: make([]int64, opts.Expert)}
	for i := range req.Seeds {
		req.Seeds[i] = 1<<40 + int64(i)
	}
	obs, _, err := env.Reset(ctx, req)
	if err != nil {
		return fmt.Errorf("diag: %w", err)
	}
	eps := make([]*episode.Episode, opts.Expert)
	experts := make([]*algorithmic.Expert, opts.Expert)
	done := make([]bool, opts.Expert)
	for i := range eps {
		eps[i] = &episode.Episode{Obs: []int32{int32(obs.Ints[i])}, Iteration: -1}
		if experts[i], err = algorithmic.NewExpert(task, cfg.Base); err != nil {
			return fmt.Errorf("diag: %w", err)
		}
	}
	moves := int64(task.Moves())
	acts := envs.NewArray(envs.Int64, opts.Expert)
	for live := opts.Expert; live > 0; {
		for i, e := range eps {
			if done[i] { // a finished copy's action is ignored, but it must be valid
				acts.Ints[i] = 0
				continue
			}
			move, write, char := experts[i].Act(int64(e.Obs[len(e.Obs)-1]))
			acts.Ints[i] = move + moves*write + 2*moves*char
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
	return storeExperts(run, eps)
}

// setExpertLevel starts the curriculum of the n copies of the expert env at min_length level (0:
// where it starts by itself).
func setExpertLevel(env envs.VecEnv, n, level int) error {
	if level <= 0 {
		return nil
	}
	c, ok := env.(interface {
		RestoreCurriculum(algorithmic.VecCurriculumState) error
	})
	if !ok {
		return fmt.Errorf("diag: expert env %T has no curriculum to set to min_length %d", env, level)
	}
	st := algorithmic.VecCurriculumState{Curricula: []algorithmic.CurriculumState{{MinLength: level}}, Pending: make([]*float64, n)}
	if err := c.RestoreCurriculum(st); err != nil {
		return fmt.Errorf("diag: expert episodes at min_length %d: %w", level, err)
	}
	return nil
}

// storeExperts adds the expert episodes to the run's replay with the priority the run gives its own.
func storeExperts(run train.Watched, eps []*episode.Episode) error {
	cfg, buf := run.Config, run.Replay
	var surplus []float64
	if cfg.ReplayPriority == config.PriorityAdvantage {
		if _, err := run.Learner.Loss(eps, false); err != nil {
			return fmt.Errorf("diag: expert episodes' surpluses: %w", err)
		}
		surplus = run.Learner.Objective().Surpluses(nil)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i, e := range eps {
		prio := e.TotalReward()
		switch cfg.ReplayPriority {
		case config.PriorityRecency:
			prio = 0
		case config.PriorityAdvantage:
			prio = surplus[i]
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

// groupOf names the parameter group of an lstm.Net parameter (see Record.GradShare).
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
