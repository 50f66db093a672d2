package train

import (
	"math"
	"math/rand/v2"

	"github.com/sparsepcl/sparsepcl/agent/collect"
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/episode"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/replay"
)

// learning is an iteration's learning, the same for both families: an optional on-policy step on
// the fresh trajectories, then, with a replay, the fresh trajectories stored and k replay steps,
// each on a batch drawn afresh from the replay. Its random draws all come from the iteration's
// stream 3: the slots a full replay of whole episodes evicts, then the k batches (the steps draw
// nothing, so the batches are drawn before them).
type learning[O episode.Observation] struct {
	fresh    []*episode.Trajectory[O]
	onPolicy bool
	buf      *replay.Buffer[O] // nil: no replay
	k, batch int               // replay steps, trajectories per replay batch
	// priorities are fresh's replay priorities, read once the on-policy step has judged them
	// (nil: their iterations).
	priorities func() []float64
	// step takes one clipped optimiser step on batch, with what the family shows around it.
	step func(kind StepKind, batch []*episode.Trajectory[O]) (pcl.StepInfo, error)
}

// learned is what an iteration's learning did: the on-policy step, the replay steps' mean loss
// and gradient norm (NaN without replay), and the last replay step with its batch.
type learned[O episode.Observation] struct {
	onPolicy, last             pcl.StepInfo
	replayLoss, replayGradNorm float64
	lastBatch                  []*episode.Trajectory[O]
}

// run does the learning of a run with cfg, drawing from rng; on error, stage names the part that
// failed. A step whose loss diverged stops the run.
func (l learning[O]) run(cfg config.Config, rng *rand.Rand) (done learned[O], stage string, err error) {
	done.replayLoss, done.replayGradNorm = math.NaN(), math.NaN()
	step := func(kind StepKind, batch []*episode.Trajectory[O]) (info pcl.StepInfo, err error) {
		if info, err = l.step(kind, batch); err == nil {
			err = checkDiverged(cfg, info.Loss)
		}
		return info, err
	}
	if l.onPolicy {
		if done.onPolicy, err = step(OnPolicyStep, l.fresh); err != nil {
			return done, "on-policy step", err
		}
	}
	if l.buf == nil {
		return done, "", nil
	}
	var prio []float64
	if l.priorities != nil {
		prio = l.priorities()
	}
	for i, t := range l.fresh {
		p := float64(t.Iteration)
		if prio != nil {
			p = prio[i]
		}
		if err := l.buf.Add(rng, t, p); err != nil {
			return done, "replay", err
		}
	}
	var loss, gradNorm float64
	for _, batch := range replayBatches(l.buf, rng, l.k, l.batch) {
		if done.last, err = step(ReplayStep, batch); err != nil {
			return done, "replay step", err
		}
		loss, gradNorm, done.lastBatch = loss+done.last.Loss, gradNorm+done.last.GradNorm, batch
	}
	done.replayLoss, done.replayGradNorm = loss/float64(l.k), gradNorm/float64(l.k)
	return done, "", nil
}

// replayBatches draws k replay batches of n trajectories, each afresh from rng, so that the first
// batch is the one a single step draws.
func replayBatches[O episode.Observation](buf *replay.Buffer[O], rng *rand.Rand, k, n int) [][]*episode.Trajectory[O] {
	batches := make([][]*episode.Trajectory[O], k)
	for i := range batches {
		batches[i] = buf.Sample(rng, n)
	}
	return batches
}

// explore sets the run's exploration on either family's sampler c; at iteration it >= 0, only the
// decayed rate.
func explore[O episode.Observation](c *collect.Collector[O], cfg config.Config, it int) error {
	if it < 0 {
		if err := c.SetExplore(cfg.Explore, cfg.ExploreShare); err != nil {
			return err
		}
		return c.SetExploreTemperature(cfg.ExploreTemp)
	}
	if cfg.ExploreDecay > 0 {
		return c.SetExplore(cfg.ExploreAt(it), cfg.ExploreShare)
	}
	return nil
}
