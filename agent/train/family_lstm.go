package train

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/success"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
)

// lstmFamily is the LSTM over whole episodes of the algorithmic tasks (config.NetLSTM): the
// episodes member of the one regime, greedy evaluation at the curriculum level training reached
// and at every level, and the tools built for it (diagnose, compare, play).
type lstmFamily struct{}

func (lstmFamily) Net() config.Net { return config.NetLSTM }

func (lstmFamily) Supports(tool Tool, subject string) error {
	if tool == ToolRecord || tool == ToolOverlap || tool == ToolReturns {
		return &UnsupportedError{Tool: tool, Family: config.NetLSTM, Subject: subject}
	}
	return nil
}

// defaults: the config's defaults are the algorithmic tasks' (the paper's).
func (lstmFamily) defaults(cfg config.Config, _ func(string) bool) (config.Config, error) {
	return cfg, nil
}

// newRegime refuses the overlap (the episodes of an algorithmic task are sampled by the policy
// that trains on them) and replay steps without a replay.
func (lstmFamily) newRegime(ctx context.Context, cfg config.Config, opts Options) (regime, error) {
	if cfg.Overlap {
		return nil, &UnsupportedError{Tool: ToolOverlap, Family: config.NetLSTM, Subject: cfg.Env}
	}
	if cfg.GradientSteps() > 1 && !cfg.Replay {
		return nil, fmt.Errorf("--train-steps %d takes replay steps, and this run has no replay (give --replay)", cfg.TrainSteps)
	}
	return newEpisodes(ctx, cfg, opts)
}

// Evaluate prints the greedy reward at the curriculum level the run was trained to with the
// verdict, then (opts.PerLength) at every level; an env without a curriculum gets its mean greedy
// reward only.
func (lstmFamily) Evaluate(ctx context.Context, dir string, opts EvalOptions, w io.Writer) error {
	reg, n, seed := opts.Registry, opts.Episodes, opts.Seed
	trained, meta, err := EvaluateTrained(ctx, dir, reg, nil, n, seed)
	if errors.Is(err, ErrNoCurriculum) {
		r, meta, err := Evaluate(ctx, dir, reg, nil, n, seed)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "run %s: %s, %s α = %g, after %d iterations: mean greedy reward %.3f over %d episodes\n",
			dir, meta.Config.Env, meta.Config.Algo, meta.Config.Alpha, meta.Iteration, r, n)
		return nil
	}
	if err != nil {
		return err
	}
	printTrained(w, dir, meta, trained)
	if !opts.PerLength {
		return nil
	}
	levels, _, err := EvaluateLengths(ctx, dir, reg, nil, n, seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nevery curriculum level (inputs of min_length to min_length+2 symbols, %d greedy episodes each):\n\n", n)
	fmt.Fprintf(w, "| min_length | mean greedy reward | largest possible | fraction | perfect episodes |\n|---|---|---|---|---|\n")
	for _, l := range levels {
		mark := ""
		if l.MinLength == trained.MinLength {
			mark = " (trained)"
		}
		fmt.Fprintf(w, "| %d%s | %.2f | %.2f | %.0f%% | %.1f%% |\n", l.MinLength, mark, l.MeanReward, l.MeanTarget, 100*l.Fraction(), 100*l.Solved)
	}
	return nil
}

// printTrained prints eval's headline: what the run is, its greedy reward at the curriculum level
// it was trained to, and the verdict against the task's solved threshold.
func printTrained(w io.Writer, dir string, meta runstore.Meta, r LengthResult) {
	c := meta.Config
	size := fmt.Sprintf("base %d", c.Base)
	if t, err := algorithmic.TaskByID(c.Env); err == nil {
		size = fmt.Sprintf("|A| = %d (base %d)", t.Moves()*2*c.Base, c.Base)
	}
	fmt.Fprintf(w, "run %s: %s %s, %s α = %g, after %d iterations\n", dir, c.Env, size, c.Algo, c.Alpha, meta.Iteration)
	fmt.Fprintf(w, "greedy reward at the trained level (min_length %d: inputs of %d-%d symbols): %.2f of %.2f possible (%.0f%%), %.1f%% of %d episodes perfect\n",
		r.MinLength, r.MinLength, r.MinLength+2, r.MeanReward, r.MeanTarget, 100*r.Fraction(), 100*r.Solved, r.Episodes)
	task, ok, err := success.ForEnv(c.Env, c.Base)
	if !ok || err != nil {
		return
	}
	if task.Solved(r.MeanReward) {
		fmt.Fprintf(w, "verdict: solved (%.2f >= %s's threshold %g)\n", r.MeanReward, c.Env, task.Threshold())
		return
	}
	fmt.Fprintf(w, "verdict: not solved (%.2f < %s's threshold %g, which is reachable only near the top level, min_length %d)\n",
		r.MeanReward, c.Env, task.Threshold(), task.TopLevel())
}
