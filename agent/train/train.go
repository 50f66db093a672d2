// Package train runs PCL training: the iteration loop (fresh batch, on-policy step, replay, replay
// step, greedy evaluation), the run directory (config.json, metrics.csv, atomic checkpoints,
// PNG plots), exact resume from the last checkpoint, and clean stops on cancel or non-finite loss.
package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/nn/checkpoint"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/plot"
	"github.com/sparsepcl/sparsepcl/agent/replay"
	"github.com/sparsepcl/sparsepcl/agent/rollout"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs"
)

// File names inside a run directory.
const (
	ConfigFile     = "config.json"
	MetricsFile    = "metrics.csv"
	CheckpointFile = "checkpoint.bin"
	RewardPlot     = "reward.png"
	SparsityPlot   = "sparsity.png"
	MaxProbPlot    = "maxprob.png"
)

// Options are the parts of a run that are not hyperparameters.
type Options struct {
	Dir      string         // run directory (created)
	Resume   bool           // continue from Dir's checkpoint
	Registry *envs.Registry // where env ids are looked up
	Engine   *tensor.Engine // nil: resolved from SPARSEPCL_BLAS
	Progress io.Writer      // nil: no progress line
	Logger   *slog.Logger   // nil: slog.Default()
}

// Meta is the checkpoint metadata.
type Meta struct {
	Config      config.Config `json:"config"`
	Iteration   int           `json:"iteration"` // iterations completed
	EnvSteps    int64         `json:"env_steps"`
	WallSeconds float64       `json:"wall_seconds"`
}

// Summary is what a finished (or stopped) run reports.
type Summary struct {
	Iterations   int
	Interrupted  bool
	LastGreedy   float64
	SecondsPerIt float64
	Rows         []Row
}

// ErrNonFinite marks a run stopped because the loss or gradient became NaN or Inf.
var ErrNonFinite = errors.New("non-finite loss or gradient")

// MakeEnv builds the VecEnv of n copies of cfg's env in AutoresetDisabled mode.
func MakeEnv(reg *envs.Registry, cfg config.Config, n int) (envs.VecEnv, error) {
	opts := map[string]any{"base": cfg.Base, "autoreset": "disabled", "per_copy_curriculum": cfg.Curriculum == config.CurriculumPerCopy}
	env, err := reg.MakeVec(cfg.Env, n, opts)
	if err != nil {
		return nil, err
	}
	return env, nil
}

// curriculumOf reports the curriculum length of copy 0 when the env has one.
func curriculumOf(env envs.VecEnv) int {
	if c, ok := env.(interface{ MinLength(i int) int }); ok {
		return c.MinLength(0)
	}
	return 0
}

func saveCheckpoint(dir string, l *pcl.Learner, meta Meta) error {
	b, err := json.Marshal(meta)
	if err != nil {
		return fmt.Errorf("train: encode checkpoint meta: %w", err)
	}
	params := append(append([]*nn.Param(nil), l.Params()...), l.Opt.StateParams()...)
	if err := checkpoint.Save(filepath.Join(dir, CheckpointFile), params, b); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	return nil
}

// LoadCheckpoint restores a learner from a run directory's checkpoint (parameters and optimizer
// state) and returns its metadata. The learner must have been built from the same config.
func LoadCheckpoint(dir string, l *pcl.Learner) (Meta, error) {
	path := filepath.Join(dir, CheckpointFile)
	f, err := checkpoint.Load(path)
	if err != nil {
		return Meta{}, fmt.Errorf("train: %w", err)
	}
	var meta Meta
	if err := json.Unmarshal(f.Meta, &meta); err != nil {
		return Meta{}, fmt.Errorf("train: checkpoint %s metadata: %w", path, err)
	}
	params := append(append([]*nn.Param(nil), l.Params()...), l.Opt.StateParams()...)
	if err := f.Apply(params); err != nil {
		return Meta{}, fmt.Errorf("train: checkpoint %s does not match the run's network: %w", path, err)
	}
	return meta, nil
}

// iterSeed derives a deterministic seed for (run seed, iteration, purpose).
func iterSeed(seed int64, iter int, purpose uint64) int64 {
	x := uint64(seed)*0x9e3779b97f4a7c15 ^ uint64(iter)*0xbf58476d1ce4e5b9 ^ purpose*0x94d049bb133111eb
	x ^= x >> 31
	x *= 0xd6e9f8cc4f2a8e4b
	x ^= x >> 29
	return int64(x >> 2)
}

func iterRNG(seed int64, iter int, purpose uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(iterSeed(seed, iter, purpose)), purpose))
}

// Run trains cfg into opts.Dir. On resume the directory's config.json is used (cfg.Iters may
// extend it) and training continues from the checkpoint. Cancelling ctx saves a checkpoint and
// returns a Summary with Interrupted set and a nil error.
func Run(ctx context.Context, cfg config.Config, opts Options) (Summary, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	if opts.Registry == nil {
		return Summary{}, fmt.Errorf("train: no environment registry")
	}
	if opts.Resume {
		saved, err := config.ReadFile(filepath.Join(opts.Dir, ConfigFile))
		if err != nil {
			return Summary{}, fmt.Errorf("train: resume: %w", err)
		}
		saved.Iters = cfg.Iters
		cfg = saved
	}
	if err := cfg.Validate(); err != nil {
		return Summary{}, err
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return Summary{}, fmt.Errorf("train: run dir: %w", err)
	}
	if !opts.Resume {
		if _, err := os.Stat(filepath.Join(opts.Dir, CheckpointFile)); err == nil {
			return Summary{}, fmt.Errorf("train: %s already holds a run (use --resume, or another --out)", opts.Dir)
		}
	}
	if err := cfg.WriteFile(filepath.Join(opts.Dir, ConfigFile)); err != nil {
		return Summary{}, err
	}
	eng := opts.Engine
	if eng == nil {
		var err error
		if eng, err = tensor.NewEngine(); err != nil {
			return Summary{}, fmt.Errorf("train: %w", err)
		}
	}
	env, err := MakeEnv(opts.Registry, cfg, cfg.BatchSize)
	if err != nil {
		return Summary{}, fmt.Errorf("train: %w", err)
	}
	defer env.Close()
	spec, err := rollout.CheckEnv(env)
	if err != nil {
		return Summary{}, fmt.Errorf("train: %w", err)
	}
	learner, err := pcl.NewLearner(cfg, spec, eng)
	if err != nil {
		return Summary{}, fmt.Errorf("train: %w", err)
	}
	sampler, err := rollout.NewSampler(env, learner.Model, cfg.MaxSteps)
	if err != nil {
		return Summary{}, fmt.Errorf("train: %w", err)
	}
	var evalSampler *rollout.Sampler
	var evalEnv envs.VecEnv
	if cfg.EvalEvery > 0 {
		if evalEnv, err = MakeEnv(opts.Registry, cfg, cfg.EvalEpisodes); err != nil {
			return Summary{}, fmt.Errorf("train: eval env: %w", err)
		}
		defer evalEnv.Close()
		if evalSampler, err = rollout.NewSampler(evalEnv, learner.Model, cfg.MaxSteps); err != nil {
			return Summary{}, fmt.Errorf("train: %w", err)
		}
	}
	var buf *replay.Buffer
	if cfg.Replay {
		if buf, err = replay.New(cfg.ReplayCapacity, cfg.ReplayAlpha, cfg.ReplayUniform, cfg.ReplayEviction); err != nil {
			return Summary{}, fmt.Errorf("train: %w", err)
		}
	}
	meta := Meta{Config: cfg}
	var rows []Row
	if opts.Resume {
		if meta, err = LoadCheckpoint(opts.Dir, learner); err != nil {
			return Summary{}, err
		}
		meta.Config = cfg
		old, err := ReadMetrics(filepath.Join(opts.Dir, MetricsFile))
		if err != nil {
			return Summary{}, fmt.Errorf("train: resume: %w", err)
		}
		for _, r := range old {
			if r.Iteration < meta.Iteration {
				rows = append(rows, r)
			}
		}
		log.Info("resuming", "dir", opts.Dir, "iteration", meta.Iteration, "note", "replay buffer and env curriculum restart empty")
	}
	mw, err := openMetrics(filepath.Join(opts.Dir, MetricsFile), rows)
	if err != nil {
		return Summary{}, err
	}
	defer mw.Close()
	log.Info("training", "env", cfg.Env, "base", cfg.Base, "actions", spec.NumActions(), "algo", cfg.Algo, "form", cfg.Form,
		"alpha", cfg.Alpha, "batch", cfg.BatchSize, "iters", cfg.Iters, "blas", eng.Backend(), "dir", opts.Dir)

	writePlots := func() {
		if err := Plots(opts.Dir, rows); err != nil {
			log.Warn("plots not written", "err", err)
		}
	}
	start := time.Now()
	baseWall := meta.WallSeconds
	sum := Summary{LastGreedy: math.NaN()}
	firstIter := meta.Iteration
	for it := meta.Iteration; it < cfg.Iters; it++ {
		if ctx.Err() != nil {
			sum.Interrupted = true
			break
		}
		res, err := sampler.Sample(ctx, iterRNG(cfg.Seed, it, 1), false, it, iterSeed(cfg.Seed, it, 2))
		if err != nil {
			if ctx.Err() != nil {
				sum.Interrupted = true
				break
			}
			return sum, fmt.Errorf("train: iteration %d: %w", it, err)
		}
		row := Row{Iteration: it, MeanReward: res.MeanReward, Support: res.Stats.MeanSupport(), MaxProb: res.Stats.MeanMaxProb(),
			Curriculum: curriculumOf(env), GreedyReward: math.NaN(), ReplayLoss: math.NaN()}
		info, err := learner.TrainStep(res.Episodes)
		if err != nil {
			return sum, fmt.Errorf("train: iteration %d, on-policy step: %w: %w (last good checkpoint kept in %s)", it, ErrNonFinite, err, opts.Dir)
		}
		row.Loss, row.GradNorm = info.Loss, info.GradNorm
		if buf != nil {
			rng := iterRNG(cfg.Seed, it, 3)
			for _, e := range res.Episodes {
				prio := e.TotalReward()
				if cfg.ReplayPriority == config.PriorityRecency {
					prio = float64(e.Iteration)
				}
				if err := buf.Add(rng, e, prio); err != nil {
					return sum, fmt.Errorf("train: iteration %d: %w", it, err)
				}
			}
			batch := buf.Sample(rng, cfg.EffectiveReplayBatch())
			rinfo, err := learner.TrainStep(batch)
			if err != nil {
				return sum, fmt.Errorf("train: iteration %d, replay step: %w: %w (last good checkpoint kept in %s)", it, ErrNonFinite, err, opts.Dir)
			}
			row.ReplayLoss = rinfo.Loss
		}
		meta.EnvSteps += int64(res.EnvSteps)
		if evalSampler != nil && (it%cfg.EvalEvery == 0 || it == cfg.Iters-1) {
			ev, err := evalSampler.Sample(ctx, iterRNG(cfg.Seed, it, 4), true, it, iterSeed(cfg.Seed, it, 5))
			if err != nil {
				if ctx.Err() != nil {
					sum.Interrupted = true
					break
				}
				return sum, fmt.Errorf("train: iteration %d, greedy evaluation: %w", it, err)
			}
			row.GreedyReward = ev.MeanReward
			sum.LastGreedy = ev.MeanReward
		}
		meta.Iteration = it + 1
		meta.WallSeconds = baseWall + time.Since(start).Seconds()
		row.EnvSteps, row.WallSeconds = meta.EnvSteps, meta.WallSeconds
		rows = append(rows, row)
		if err := mw.write(row); err != nil {
			return sum, err
		}
		if opts.Progress != nil {
			g := "-"
			if !math.IsNaN(sum.LastGreedy) {
				g = fmt.Sprintf("%.2f", sum.LastGreedy)
			}
			fmt.Fprintf(opts.Progress, "\riter %d/%d  reward %.2f  greedy %s  curriculum %d  loss %.3g  support %.1f  %.2fs/it ",
				it+1, cfg.Iters, row.MeanReward, g, row.Curriculum, row.Loss, row.Support, meta.WallSeconds/float64(meta.Iteration))
		}
		if cfg.CheckpointEvery > 0 && meta.Iteration%cfg.CheckpointEvery == 0 {
			if err := saveCheckpoint(opts.Dir, learner, meta); err != nil {
				return sum, err
			}
			writePlots()
		}
		if cfg.StopAtThreshold && row.GreedyReward >= cfg.RewardThreshold {
			log.Info("reward threshold reached", "iteration", it, "greedy", row.GreedyReward)
			break
		}
	}
	if opts.Progress != nil {
		fmt.Fprintln(opts.Progress)
	}
	if err := saveCheckpoint(opts.Dir, learner, meta); err != nil {
		return sum, err
	}
	writePlots()
	sum.Iterations = meta.Iteration
	sum.Rows = rows
	if n := meta.Iteration - firstIter; n > 0 {
		sum.SecondsPerIt = time.Since(start).Seconds() / float64(n)
	}
	log.Info("run saved", "dir", opts.Dir, "iterations", meta.Iteration, "interrupted", sum.Interrupted, "greedy", sum.LastGreedy)
	return sum, nil
}

// Plots writes reward.png, sparsity.png and maxprob.png for rows into dir.
func Plots(dir string, rows []Row) error {
	var it, mean, git, greedy, sup, mp []float64
	for _, r := range rows {
		x := float64(r.Iteration)
		it = append(it, x)
		mean = append(mean, r.MeanReward)
		sup = append(sup, r.Support)
		mp = append(mp, r.MaxProb)
		if !math.IsNaN(r.GreedyReward) {
			git = append(git, x)
			greedy = append(greedy, r.GreedyReward)
		}
	}
	if len(it) == 0 {
		return nil
	}
	err := plot.Lines(filepath.Join(dir, RewardPlot), "reward", "iteration", "mean episode reward",
		[]plot.Series{{Name: "sampled", X: it, Y: mean}, {Name: "greedy", X: git, Y: greedy}}, nil)
	if err != nil {
		return err
	}
	if err := plot.Lines(filepath.Join(dir, MaxProbPlot), "probability of the most likely action", "iteration", "mean max_a pi(a|s) over visited states",
		[]plot.Series{{Name: "max prob", X: it, Y: mp}}, nil); err != nil {
		return err
	}
	return plot.Lines(filepath.Join(dir, SparsityPlot), "policy support size", "iteration", "mean |{a : pi(a|s) > 0}|",
		[]plot.Series{{Name: "support size", X: it, Y: sup}}, nil)
}

// Evaluate loads a run directory's checkpoint and returns the mean greedy reward over n episodes
// (the env's curriculum starts fresh, as in a new process).
func Evaluate(ctx context.Context, dir string, reg *envs.Registry, eng *tensor.Engine, n int, seed int64) (float64, Meta, error) {
	cfg, err := config.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		return 0, Meta{}, fmt.Errorf("eval: %w", err)
	}
	env, err := MakeEnv(reg, cfg, n)
	if err != nil {
		return 0, Meta{}, fmt.Errorf("eval: %w", err)
	}
	defer env.Close()
	spec, err := rollout.CheckEnv(env)
	if err != nil {
		return 0, Meta{}, fmt.Errorf("eval: %w", err)
	}
	if eng == nil {
		if eng, err = tensor.NewEngine(); err != nil {
			return 0, Meta{}, err
		}
	}
	l, err := pcl.NewLearner(cfg, spec, eng)
	if err != nil {
		return 0, Meta{}, fmt.Errorf("eval: %w", err)
	}
	meta, err := LoadCheckpoint(dir, l)
	if err != nil {
		return 0, Meta{}, fmt.Errorf("eval: %w", err)
	}
	s, err := rollout.NewSampler(env, l.Model, cfg.MaxSteps)
	if err != nil {
		return 0, Meta{}, fmt.Errorf("eval: %w", err)
	}
	res, err := s.Sample(ctx, rand.New(rand.NewPCG(uint64(seed), 0)), true, meta.Iteration, seed)
	if err != nil {
		return 0, Meta{}, fmt.Errorf("eval: %w", err)
	}
	return res.MeanReward, meta, nil
}
