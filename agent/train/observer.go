package train

import (
	"context"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/collect"
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/episode"
	"github.com/sparsepcl/sparsepcl/agent/model/lstm"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/replay"
	"github.com/sparsepcl/sparsepcl/envs"
)

// Observer watches the iterations of an LSTM run (the episodes member) from inside the one
// training loop (Options.Observer): the lab's diagnosis probe (pcl diagnose) inspects the batches and gradients through
// it, and pcl bench times the phases. Its methods are called in the order of an iteration:
//
//	Start                                  once, before the first iteration
//	Sampled                                the iteration's fresh episodes
//	BeforeStep, AfterStep (on-policy)      the step on the fresh episodes
//	BeforeStep, AfterStep (replay)         with replay: the step on a replayed batch
//	Trained                                the iteration's training is done
//
// An error stops the run there, as a failure of the stage it was called in. An Observer changes
// nothing the run computes unless it changes what it is shown (Start may fill the replay buffer).
// Embed NopObserver to implement only some of the methods.
type Observer interface {
	// Start is called once before the first iteration, with what the run trains.
	Start(ctx context.Context, run Watched) error
	// Sampled is called after each iteration's sampling.
	Sampled(s Sample) error
	// BeforeStep is called before each training step, with its batch.
	BeforeStep(s Step) error
	// AfterStep is called after each training step that succeeded, with what it measured and
	// how long it took.
	AfterStep(s Step, info pcl.StepInfo, took time.Duration) error
	// Trained is called when the training of iteration it is done.
	Trained(it int) error
}

// Watched is what an Observer sees of a run before its first iteration.
type Watched struct {
	Config  config.Config
	Spec    lstm.Spec
	Learner *lstm.Learner
	// Replay is the run's replay buffer (nil without replay); Start may fill it, as the diagnosis probe
	// does with expert episodes.
	Replay *replay.Buffer[int32]
}

// Sample is an iteration's fresh experience, as Observer.Sampled sees it: its episodes, their
// statistics and mean reward, the env steps taken.
type Sample struct {
	Iteration int
	collect.Batch[int32]
	// Env is the env that played them: its curriculum and the algorithmic tasks' targets are the
	// episodes' until the next sampling.
	Env  envs.VecEnv
	Took time.Duration // the sampling's wall time
}

// StepKind says which of an iteration's training steps a Step is.
type StepKind int

// The training steps of an iteration of an LSTM run.
const (
	OnPolicyStep StepKind = iota // on the fresh episodes
	ReplayStep                   // on a batch sampled from the replay buffer
)

// Step is a training step, as Observer.BeforeStep and AfterStep see it.
type Step struct {
	Iteration int
	Kind      StepKind
	Batch     []*episode.Episode
}

// NopObserver is an Observer that does nothing; embed it to implement only some methods.
type NopObserver struct{}

// Start does nothing.
func (NopObserver) Start(context.Context, Watched) error { return nil }

// Sampled does nothing.
func (NopObserver) Sampled(Sample) error { return nil }

// BeforeStep does nothing.
func (NopObserver) BeforeStep(Step) error { return nil }

// AfterStep does nothing.
func (NopObserver) AfterStep(Step, pcl.StepInfo, time.Duration) error { return nil }

// Trained does nothing.
func (NopObserver) Trained(int) error { return nil }
