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

// The learning of an iteration, the same for both families: an optional on-policy step on the
// fresh trajectories, then, with a replay, the fresh trajectories stored and k replay steps,
// each on a batch drawn afresh from the replay. Every random draw of it comes from the
// iteration's stream 3: the slots a full replay of whole episodes evicts, then the k batches, in
// that order (the steps draw nothing, so the batches are drawn before them).

// learning is one iteration's learning, as a family sets it up.
type learning[O episode.Observation] struct {
	fresh    []*episode.Trajectory[O]
	onPolicy bool              // take the on-policy step on fresh
	buf      *replay.Buffer[O] // nil: no replay
	steps    int               // replay steps (k)
	batch    int               // trajectories per replay batch
	// priorities are fresh's replay priorities, read once the on-policy step has judged them.
	priorities func() []float64
	// step takes one training step on batch (a clipped optimiser step, with what the family
	// shows around it) and stops a diverged run.
	step func(kind StepKind, batch []*episode.Trajectory[O]) (pcl.StepInfo, error)
}

// learned is what an iteration's learning did.
type learned[O episode.Observation] struct {
	onPolicy pcl.StepInfo // the on-policy step (zero without one)
	// replayLoss and replayGradNorm are the means over the replay steps (NaN without replay).
	replayLoss, replayGradNorm float64
	last                       pcl.StepInfo             // the last replay step
	lastBatch                  []*episode.Trajectory[O] // its batch
}

// run does the iteration's learning with the iteration's random stream rng; on error, stage
// names the part that failed.
func (l learning[O]) run(rng *rand.Rand) (done learned[O], stage string, err error) {
	done.replayLoss, done.replayGradNorm = math.NaN(), math.NaN()
	if l.onPolicy {
		if done.onPolicy, err = l.step(OnPolicyStep, l.fresh); err != nil {
			return done, "on-policy step", err
		}
	}
	if l.buf == nil {
		return done, "", nil
	}
	for i, p := range l.priorities() {
		if err := l.buf.Add(rng, l.fresh[i], p); err != nil {
			return done, "replay", err
		}
	}
	var loss, gradNorm float64
	for _, batch := range replayBatches(l.buf, rng, l.steps, l.batch) {
		info, err := l.step(ReplayStep, batch)
		if err != nil {
			return done, "replay step", err
		}
		loss, gradNorm = loss+info.Loss, gradNorm+info.GradNorm
		done.last, done.lastBatch = info, batch
	}
	done.replayLoss, done.replayGradNorm = loss/float64(l.steps), gradNorm/float64(l.steps)
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

// explore sets the run's exploration on the sampler c of either family: the rate, the share of
// copies that explore and their temperature.
func explore[O episode.Observation](c *collect.Collector[O], cfg config.Config) error {
	if err := c.SetExplore(cfg.Explore, cfg.ExploreShare); err != nil {
		return err
	}
	return c.SetExploreTemperature(cfg.ExploreTemp)
}

// exploreAt sets iteration it's exploration rate on c when the rate decays.
func exploreAt[O episode.Observation](c *collect.Collector[O], cfg config.Config, it int) error {
	if cfg.ExploreDecay > 0 {
		return c.SetExplore(cfg.ExploreAt(it), cfg.ExploreShare)
	}
	return nil
}
