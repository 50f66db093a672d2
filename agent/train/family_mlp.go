package train

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"

	"github.com/sparsepcl/sparsepcl/agent/atomicfile"
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
)

// mlpFamily is the paper's continuous-control model (config.NetMLP): separate feed-forward policy
// and value networks trained on sub-episodes of copies that keep running across iterations (the
// steps member of the one regime), with the long-episode preset as its defaults, and greedy
// evaluation of whole episodes, one of which can be drawn as a GIF.
type mlpFamily struct{}

func (mlpFamily) Net() config.Net { return config.NetMLP }

func (mlpFamily) Supports(tool Tool, subject string) error {
	switch tool {
	case ToolDiagnose, ToolCompare, ToolPlay, ToolPerLength, ToolObserver:
		return &UnsupportedError{Tool: tool, Family: config.NetMLP, Subject: subject}
	}
	return nil
}

// defaults applies the long-episode preset (config.LongEpisodePreset) to the fields not given.
func (mlpFamily) defaults(cfg config.Config, given func(string) bool) (config.Config, error) {
	err := cfg.ApplyLongEpisodeDefaults(given)
	return cfg, err
}

// newRegime refuses an Observer: it watches the LSTM's episodes.
func (mlpFamily) newRegime(ctx context.Context, cfg config.Config, opts Options) (regime, error) {
	if opts.Observer != nil {
		return nil, &UnsupportedError{Tool: ToolObserver, Family: config.NetMLP, Subject: cfg.Env}
	}
	return newSteps(ctx, cfg, opts)
}

// Evaluate prints the greedy returns of the checkpoint over opts.Episodes episodes and, with
// opts.Record, draws one greedy episode into a GIF and checks that the replay that rendered it
// reached the same return.
func (mlpFamily) Evaluate(ctx context.Context, dir string, opts EvalOptions, w io.Writer) error {
	if opts.Episodes < 1 {
		return fmt.Errorf("eval: %d episodes, want >= 1", opts.Episodes)
	}
	maker := opts.envMaker()
	gaps, err := pcl.NewGapCounter(pcl.GapThresholds(), 10)
	if err != nil {
		return err
	}
	returns, meta, err := EvaluateSteps(ctx, dir, maker, nil, opts.Episodes, opts.Seed, gaps.Add)
	if err != nil {
		return err
	}
	c := meta.Config
	m, sd := stat.PopMeanStdDev(returns, nil)
	size := ""
	if c.Grid > 0 {
		size = fmt.Sprintf(" grid %d", c.Grid)
	}
	fmt.Fprintf(w, "run %s (%s%s, %s/%s, alpha %g) after %d iterations (%d env steps): greedy return %.1f ± %.1f over %d episodes [min %.1f, max %.1f]\n",
		dir, c.Env, size, c.Algo, c.Form, c.Alpha, meta.Iteration, meta.EnvSteps, m, sd, opts.Episodes, slices.Min(returns), slices.Max(returns))
	fmt.Fprintf(w, "greedy states: %s\n", gaps.Result())
	if opts.Returns != "" {
		res := GreedyReturns{Run: dir, Iteration: meta.Iteration, EnvSteps: meta.EnvSteps, Seed: opts.Seed, Returns: returns, Mean: m, Std: sd}
		data, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		if err := atomicfile.WriteFile(opts.Returns, append(data, '\n'), 0o644); err != nil {
			return fmt.Errorf("eval: the returns: %w", err)
		}
	}
	if opts.Record == "" {
		return nil
	}
	if opts.Render == nil {
		return fmt.Errorf("record: no renderer")
	}
	ep, cfg, err := RecordSteps(ctx, dir, maker, nil, opts.Seed)
	if err != nil {
		return err
	}
	frames, ret, err := opts.Render(ctx, cfg.Env, ep.Seed, ep.Actions, opts.Record)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "recorded %s: %d steps, return %.1f (replayed: %.1f), %d frames\n", opts.Record, len(ep.Actions), ep.Return, ret, frames)
	if math.Abs(ret-ep.Return) > 1e-6*math.Max(1, math.Abs(ep.Return)) {
		return fmt.Errorf("record: the rendered replay returned %v, the episode %v: the env is not deterministic for this seed, the GIF shows another episode", ret, ep.Return)
	}
	return nil
}
