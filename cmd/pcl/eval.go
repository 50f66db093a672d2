package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/sparsepcl/sparsepcl/agent/experiment"
	"github.com/sparsepcl/sparsepcl/agent/success"
	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/envs/registry"
	"github.com/sparsepcl/sparsepcl/internal/envmaker"
	"github.com/sparsepcl/sparsepcl/internal/provenance"
)

// recordSteps writes one greedy episode of a long-episode run as a GIF and checks that the replay
// that rendered it reached the same return.
func recordSteps(ctx context.Context, dir string, maker *envmaker.Maker, seed int64, out string, stdout io.Writer) error {
	ep, cfg, err := train.RecordSteps(ctx, dir, train.FactoryEnvs{Factory: maker}, nil, seed)
	if err != nil {
		return err
	}
	res, err := maker.Render(ctx, cfg.Env, ep.Seed, ep.Actions, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "recorded %s: %d steps, return %.1f (replayed: %.1f), %d frames\n", out, len(ep.Actions), ep.Return, res.Return, res.Frames)
	if math.Abs(res.Return-ep.Return) > 1e-6*math.Max(1, math.Abs(ep.Return)) {
		return fmt.Errorf("record: the rendered replay returned %v, the episode %v: the env is not deterministic for this seed, the GIF shows another episode", res.Return, ep.Return)
	}
	return nil
}

// evalSteps prints the greedy returns of a long-episode run's checkpoint over n episodes.
func evalSteps(ctx context.Context, dir string, maker *envmaker.Maker, n int, seed int64, stdout io.Writer) error {
	returns, meta, err := train.EvaluateSteps(ctx, dir, train.FactoryEnvs{Factory: maker}, nil, n, seed)
	if err != nil {
		return err
	}
	c := meta.Config
	m, sd := experiment.MeanStd(returns)
	size := ""
	if c.Grid > 0 {
		size = fmt.Sprintf(" grid %d", c.Grid)
	}
	fmt.Fprintf(stdout, "run %s (%s%s, %s/%s, alpha %g) after %d iterations (%d env steps): greedy return %.1f ± %.1f over %d episodes [min %.1f, max %.1f]\n",
		dir, c.Env, size, c.Algo, c.Form, c.Alpha, meta.Iteration, meta.EnvSteps, m, sd, n, slices.Min(returns), slices.Max(returns))
	return nil
}

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("eval", stderr)
	dir := fs.String("run", "", "run `directory` written by pcl train")
	n := fs.Int("episodes", 400, "greedy episodes at the trained level (and at each curriculum level with --per-length)")
	seed := fs.Int64("seed", 12345, "seed of the evaluation episodes")
	perLength := fs.Bool("per-length", true, "also report the greedy reward at every curriculum level up to the top")
	record := fs.String("record", "", "long-episode runs: also play one greedy episode (seed --seed) and write it as an animated GIF to this `file`")
	var servers stringList
	fs.Var(&servers, "server", "`endpoint` of a running env server (tcp://host:port), repeatable (runs on Gymnasium envs; default: start one)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dir == "" {
		return usageError{fmt.Errorf("--run is required")}
	}
	if *n < 1 {
		return usageError{fmt.Errorf("--episodes = %d, want >= 1", *n)}
	}
	given := givenFlags(fs)
	reg := registry.Default()
	steps, _, err := train.IsStepsRun(*dir)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, provenance.Line(*dir))
	if steps {
		if given["per-length"] {
			return usageError{fmt.Errorf("--per-length is for the algorithmic tasks' curriculum; %s is a long-episode run", *dir)}
		}
		maker := &envmaker.Maker{Registry: reg, Servers: servers}
		if err := evalSteps(ctx, *dir, maker, *n, *seed, stdout); err != nil {
			return err
		}
		if *record == "" {
			return nil
		}
		return recordSteps(ctx, *dir, maker, *seed, *record, stdout)
	}
	if *record != "" {
		return usageError{fmt.Errorf("--record works on long-episode (mlp) runs; watch an algorithmic task with pcl play")}
	}
	trained, meta, err := train.EvaluateTrained(ctx, *dir, reg, nil, *n, *seed)
	if errors.Is(err, train.ErrNoCurriculum) {
		r, meta, err := train.Evaluate(ctx, *dir, reg, nil, *n, *seed)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "run %s: %s, %s α = %g, after %d iterations: mean greedy reward %.3f over %d episodes\n",
			*dir, meta.Config.Env, meta.Config.Algo, meta.Config.Alpha, meta.Iteration, r, *n)
		return nil
	}
	if err != nil {
		return err
	}
	printTrained(stdout, *dir, meta, trained)
	if !*perLength {
		return nil
	}
	levels, _, err := train.EvaluateLengths(ctx, *dir, reg, nil, *n, *seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nevery curriculum level (inputs of min_length to min_length+2 symbols, %d greedy episodes each):\n\n", *n)
	fmt.Fprintf(stdout, "| min_length | mean greedy reward | largest possible | fraction | perfect episodes |\n|---|---|---|---|---|\n")
	for _, l := range levels {
		mark := ""
		if l.MinLength == trained.MinLength {
			mark = " (trained)"
		}
		fmt.Fprintf(stdout, "| %d%s | %.2f | %.2f | %.0f%% | %.1f%% |\n", l.MinLength, mark, l.MeanReward, l.MeanTarget, 100*l.Fraction(), 100*l.Solved)
	}
	return nil
}

// printTrained prints eval's headline: what the run is, its greedy reward at the curriculum level
// it was trained to, and the verdict against the task's solved threshold.
func printTrained(w io.Writer, dir string, meta train.Meta, r train.LengthResult) {
	c := meta.Config
	size := fmt.Sprintf("base %d", c.Base)
	if a, err := experiment.NumActions(c.Env, c.Base); err == nil {
		size = fmt.Sprintf("|A| = %d (base %d)", a, c.Base)
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
