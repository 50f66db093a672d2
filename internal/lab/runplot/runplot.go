// Package runplot draws a training run's own figures from its metrics rows, into its directory:
// the return (sampled and greedy), the policy's largest probability and its support size, and,
// where the rows measure it, the critic's V against the discounted return it should reach.
// Training draws nothing itself: pcl train passes Run as its train.Options.Plot.
package runplot

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/internal/lab/plot"
)

// The figures' file names in the run directory.
const (
	RewardPlot   = "reward.png"
	SparsityPlot = "sparsity.png"
	MaxProbPlot  = "maxprob.png"
	// ValuePlot is V against the discounted return (long-episode runs, which measure both).
	ValuePlot = "value.png"
)

// Axis is what a run's figures are drawn against, with the words that go with it.
type Axis struct {
	x               func(r runstore.Row) float64 // a row's place on the axis
	label           string                       // the x axis
	reward, sampled string                       // the reward's y label and its sampled series' name
	stats           string                       // how max-prob and support are averaged, after their y label
	size            func(cfg config.Config, actions int) string
}

// Iterations draws a whole-episode run (the algorithmic tasks) against its iterations.
var Iterations = Axis{
	x:     func(r runstore.Row) float64 { return float64(r.Iteration) },
	label: "iteration", reward: "mean episode reward", sampled: "sampled", stats: " over visited states",
	size: func(cfg config.Config, actions int) string { return plot.SizeLabel(actions, cfg.Base, 0) },
}

// EnvSteps draws a long-episode run against its env steps.
var EnvSteps = Axis{
	x:     func(r runstore.Row) float64 { return float64(r.EnvSteps) },
	label: "env steps", reward: "undiscounted return", sampled: "episode return", stats: ", last 1000 steps",
	size: func(cfg config.Config, actions int) string { return plot.SizeLabel(actions, 0, cfg.Grid) },
}

// Run draws a training run's figures, as train.Options.Plot: against env steps for a long-episode
// run, against iterations otherwise.
func Run(p train.RunPlots) error {
	axis := Iterations
	if p.EnvSteps {
		axis = EnvSteps
	}
	return Draw(p.Dir, p.Config, p.Actions, p.Rows, axis)
}

// Draw writes reward.png, maxprob.png, sparsity.png and (where the rows measure V) value.png for
// rows into dir, against axis, titled with the run: env, |A| and its size, algorithm and weight,
// seed. Rows without a sampled or greedy reward (NaN) leave a gap in that series.
func Draw(dir string, cfg config.Config, actions int, rows []runstore.Row, axis Axis) error {
	if len(rows) == 0 {
		return nil
	}
	var xs, sup, mp []float64
	var sampled, greedy plot.Series
	sampled.Name, greedy.Name = axis.sampled, "greedy"
	for _, r := range rows {
		x := axis.x(r)
		xs, sup, mp = append(xs, x), append(sup, r.Support), append(mp, r.MaxProb)
		if !math.IsNaN(r.MeanReward) {
			sampled.X, sampled.Y = append(sampled.X, x), append(sampled.Y, r.MeanReward)
		}
		if !math.IsNaN(r.GreedyReward) {
			greedy.X, greedy.Y = append(greedy.X, x), append(greedy.Y, r.GreedyReward)
		}
	}
	title := fmt.Sprintf("%s %s, %s, seed %d", cfg.Env, axis.size(cfg, actions), plot.AlgoLabel(cfg.Algo, cfg.Alpha, cfg.TsallisQ), cfg.Seed)
	figures := []struct {
		file, y string
		series  []plot.Series
	}{
		{RewardPlot, axis.reward, nonEmpty(sampled, greedy)},
		{MaxProbPlot, "mean max_a π(a|s)" + axis.stats, []plot.Series{{Name: "max prob", X: xs, Y: mp}}},
		{SparsityPlot, "mean |{a : π(a|s) > 0}|" + axis.stats, []plot.Series{{Name: "support size", X: xs, Y: sup}}},
		{ValuePlot, "mean over the trained batch's states of ended episodes", valueSeries(rows, axis)},
	}
	for _, f := range figures {
		if len(f.series) == 0 {
			continue
		}
		if err := plot.Lines(filepath.Join(dir, f.file), title, axis.label, f.y, f.series, nil); err != nil {
			return err
		}
	}
	return nil
}

// nonEmpty is the series that have points.
func nonEmpty(series ...plot.Series) []plot.Series {
	var out []plot.Series
	for _, s := range series {
		if len(s.X) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// valueSeries is V and the discounted return at the rows that measure both (none: no figure).
func valueSeries(rows []runstore.Row, axis Axis) []plot.Series {
	v := plot.Series{Name: "V"}
	g := plot.Series{Name: "discounted return"}
	for _, r := range rows {
		if !math.IsNaN(r.ValueMean) && !math.IsNaN(r.ReturnDiscounted) {
			x := axis.x(r)
			v.X, v.Y = append(v.X, x), append(v.Y, r.ValueMean)
			g.X, g.Y = append(g.X, x), append(g.Y, r.ReturnDiscounted)
		}
	}
	if len(v.X) == 0 {
		return nil
	}
	return []plot.Series{v, g}
}
