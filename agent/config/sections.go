package config

import (
	"fmt"
	"math"
)

// EnvConfig is the environment a run trains on.
type EnvConfig struct {
	Env        string `json:"env"`        // registered env id, e.g. "Copy-v0"
	Base       int    `json:"base"`       // alphabet size of the algorithmic task (|A| = 2*2*base for Copy)
	MaxSteps   int    `json:"max_steps"`  // cap on episode length; a cut-off episode is truncated (200 as in pcl_rl)
	Curriculum string `json:"curriculum"` // "shared" (default, like the reference runs) or "per-copy"
}

// AlgorithmConfig is the consistency the learner minimises: the algorithm, its form, its weight
// (fixed, scheduled or learned) and the path consistency's discount and length.
type AlgorithmConfig struct {
	Algo     string  `json:"algo"`      // "sparse", "soft" or "tsallis"
	Form     string  `json:"form"`      // "separate" (default) or "unified"
	Alpha    float64 `json:"alpha"`     // regularisation weight: alpha for sparse/tsallis, tau for soft
	TsallisQ float64 `json:"tsallis_q"` // entropic index q of the tsallis algo (1 < q; q = 2 is sparse)
	// AlphaStart and AlphaDecay, when AlphaStart > 0, make Alpha the floor of the released code's
	// schedule: alpha = max(AlphaStart * AlphaDecay^(iteration/100), Alpha).
	AlphaStart float64 `json:"alpha_start,omitempty"`
	AlphaDecay float64 `json:"alpha_decay,omitempty"`
	// AlphaAuto learns alpha from Alpha on, steering the policy's max-prob toward a target that
	// rises from 0.5 to 0.9 (agent/weight.Auto).
	AlphaAuto bool    `json:"alpha_auto,omitempty"`
	Gamma     float64 `json:"gamma"`   // discount; 0.9 (paper)
	Rollout   int     `json:"rollout"` // d of the d-step consistency; 10 (paper)
	// CriticWeight multiplies the gradient reaching V; 1.0 as in the pcl_rl README's PCL command.
	CriticWeight float64 `json:"critic_weight"`
	// TrustRegion, when > 0, is the weight λ of a trust region to the lagged policy (needs
	// TargetLag; separate form; soft or sparse): soft PCL's relative entropy λ·KL(π‖π̃), as the
	// released Trust-PCL, and sparse PCL's Tsallis counterpart λ·½‖π − π̃‖². Either consistency
	// keeps its form with α + λ in place of α and a per-step shift read off π̃
	// (docs/trust-region.md).
	TrustRegion float64 `json:"trust_region,omitempty"`
	// PGScale is "inverse-alpha" (default, the released code: policy gradient = grad(C^2/2)/alpha)
	// or "none" (the paper's Algorithm 1: plain grad(C^2/2)). The default follows the code because
	// its learning rate, clipping and Adam settings were tuned with that scaling.
	PGScale string `json:"pg_scale"`
}

// NetworkConfig is the network family, its sizes and initialisation, and the action grid that
// sets the size of its policy head over a Box action space.
type NetworkConfig struct {
	Net       string `json:"net"`        // "auto" (default: lstm for Discrete observations, mlp for Box), "lstm" or "mlp"
	Hidden    int    `json:"hidden"`     // LSTM units; 128 (paper)
	MLPHidden int    `json:"mlp_hidden"` // units of each of the two tanh layers of the mlp networks; 64 (paper)
	// NormObs normalises Box observations of the mlp by running mean and std (checkpointed).
	NormObs bool `json:"norm_obs"`
	// LogitInitScale multiplies the initial weights and bias of the policy's logit (or Q) head, of
	// either network family; 1 keeps Glorot's, a small value starts the policy near uniform
	// (CleanRL's PPO: std 0.01), 0 exactly uniform.
	LogitInitScale float64 `json:"logit_init_scale"`
	// LambdaInit sets where the sparse (and Tsallis) multiplier's log-scale head starts: "one"
	// (default: bias 0, exp(head) = 1, as the paper's parameterisation initialises it) or "alpha"
	// (bias log α, so exp(head) starts at the weight: the multiplier's scale at the optimum).
	LambdaInit string `json:"lambda_init"`
	// EmbedStd is the truncated-normal std of the LSTM's input embeddings; 0.01 (the released code).
	EmbedStd float64 `json:"embed_std"`
	// ValueScale multiplies the mlp value network's output: V = ValueScale * NN(x). Under Adam the
	// output moves at most about lr * (H + 1) per step, so a return scale of -40 takes ~1,000
	// steps at scale 1 and ValueScale times fewer at a larger scale.
	ValueScale float64 `json:"value_scale"`
	Grid       int     `json:"grid"` // points per dimension of the action grid over a Box action space (0: none; paper: 3 or 5)
}

// StepSamplingConfig is the sampling of long-episode runs (net mlp): copies that are not reset
// per iteration, cut into sub-episodes kept in a step replay.
type StepSamplingConfig struct {
	NumEnvs       int     `json:"num_envs"`       // copies stepping together; 1 (paper: one trajectory)
	StepsPerIter  int     `json:"steps_per_iter"` // env steps per copy per iteration; 100 (paper)
	SubEpisodes   int     `json:"sub_episodes"`   // sub-episodes per replay training batch; 25 (paper)
	ReplaySteps   int     `json:"replay_steps"`   // step replay capacity in env steps; 1,000,000
	RecencyWeight float64 `json:"recency_weight"` // sub-episode sampling weight exp(w * (iteration - newest)); 0.01 (paper)
	// OnPolicyStep adds a gradient step on the fresh sub-episodes before the replay step (the
	// paper takes the replay step alone).
	OnPolicyStep bool `json:"on_policy_step"`
	// TrainSteps is the number of gradient steps per iteration (0 or 1: one, the paper's), each
	// on a batch of SubEpisodes drawn afresh from the replay: the replay ratio. Each env step is
	// then trained on about TrainSteps * SubEpisodes / NumEnvs rows (25 in the paper; the released
	// Trust-PCL settings about 640). Omitted from config.json at 0, so older runs keep theirs.
	TrainSteps int `json:"train_steps,omitempty"`
	// TargetLag, when > 0, bootstraps each consistency from a lagged copy of the network,
	// θ̄ ← TargetLag·θ̄ + (1−TargetLag)·θ after every gradient step (the released Trust-PCL's
	// use_target_values with target_network_lag 0.99); 0 bootstraps from the network itself.
	TargetLag float64 `json:"target_lag,omitempty"`
	// Overlap steps the env copies for the next iteration, with a snapshot of the policy taken
	// before this iteration's training steps, while those steps run: the wall time approaches
	// the larger of env stepping and training instead of their sum, and the behaviour policy is
	// one iteration older (off-policy PCL learns from it all the same). Runs without it are what
	// they were, bit for bit.
	Overlap bool `json:"overlap,omitempty"`
}

// GradientSteps is the number of replay gradient steps per iteration: TrainSteps, at least 1.
func (c StepSamplingConfig) GradientSteps() int { return max(c.TrainSteps, 1) }

// RowsPerEnvStep is how many times a training run uses each env step, on average: the rows of
// its gradient steps per iteration over the env steps it collects (25 at the paper's settings).
func (c StepSamplingConfig) RowsPerEnvStep() float64 {
	return float64(c.GradientSteps()*c.SubEpisodes*c.StepsPerIter) / float64(c.NumEnvs*c.StepsPerIter)
}

// OptimiserConfig is the optimiser of every parameter and its gradient clipping.
type OptimiserConfig struct {
	// Optimizer is "adam" (default: the released code's), "sgd" (plain gradient steps, the paper's
	// Algorithm 1) or "rmsprop" (decay 0.9, epsilon AdamEps, no momentum).
	Optimizer    string  `json:"optimizer"`
	LearningRate float64 `json:"learning_rate"` // 0.005 (paper)
	AdamBeta1    float64 `json:"adam_beta1"`    // 0.9 (TF default, used by pcl_rl)
	AdamBeta2    float64 `json:"adam_beta2"`    // 0.999
	AdamEps      float64 `json:"adam_eps"`      // 2e-4 (pcl_rl); also RMSProp's epsilon
	ClipNorm     float64 `json:"clip_norm"`     // global-norm clip; 10 (pcl_rl README PCL command; the paper is silent)
}

// EpisodeSamplingConfig is the sampling of whole-episode runs (net lstm): the batch of fresh
// episodes per iteration and the prioritised episode replay.
type EpisodeSamplingConfig struct {
	BatchSize       int     `json:"batch_size"`        // fresh episodes per iteration; 400 (paper)
	Replay          bool    `json:"replay"`            // one extra step on a replayed batch per iteration (paper: on)
	ReplayBatchSize int     `json:"replay_batch_size"` // episodes per replay step; 0 means BatchSize
	ReplayCapacity  int     `json:"replay_capacity"`   // episodes; 10,000 (paper)
	ReplayAlpha     float64 `json:"replay_alpha"`      // softmax temperature on priorities; 0.5 (paper)
	ReplayUniform   float64 `json:"replay_uniform"`    // uniform mixture weight; 0.1 (paper: 0.1 + 0.9 softmax)
	ReplayPriority  string  `json:"replay_priority"`   // "reward" (default, the paper), "recency" (the released code) or "advantage"
	ReplayEviction  string  `json:"replay_eviction"`   // "random" (default) or "fifo"
	// Explore is the probability that a step of a fresh episode takes a uniformly random action
	// instead of the policy's draw (0: the policy alone, as the paper samples). Path consistency
	// holds off-policy, so such episodes train and fill the replay like the policy's own.
	Explore float64 `json:"explore,omitempty"`
	// ExploreShare is the fraction of each batch's copies, the first ones, that explore (0, like 1:
	// every copy). A shared curriculum levels up on consecutive perfect episodes in copy order,
	// which exploring copies rarely give: the copies after them keep it moving.
	ExploreShare float64 `json:"explore_share,omitempty"`
	// ExploreDecay anneals Explore in the released code's form for its weight: the probability
	// at iteration it is Explore · ExploreDecay^(it/100) (0: a constant Explore). A fixed ε keeps
	// the exploring copies' episodes short of a perfect one at long curriculum lengths
	// (0.7^30 ≈ 2e-5 at ε 0.3 and 30 symbols); an annealed one hands them back to the policy.
	ExploreDecay float64 `json:"explore_decay,omitempty"`
	// ExploreTemp draws the exploring actions from softmax(z/ExploreTemp) of the policy's logits
	// instead of uniformly (0: uniformly). A sparse policy that writes a symbol wrongly with
	// certainty often ranks the right one second (Copy |A| = 160: a gap of 4-6 in z), which a
	// temperature of 2-3 proposes 9-14 times as often as 1/|A|.
	ExploreTemp float64 `json:"explore_temp,omitempty"`
}

// ExploreAt is the exploration probability at iteration it: Explore, annealed by ExploreDecay
// every 100 iterations when that is set.
func (c EpisodeSamplingConfig) ExploreAt(it int) float64 {
	if c.ExploreDecay == 0 {
		return c.Explore
	}
	return c.Explore * math.Pow(c.ExploreDecay, float64(it)/100)
}

// RunConfig is the run's length, seed, evaluation, checkpoints and stopping rules.
type RunConfig struct {
	Iters           int     `json:"iters"`            // training iterations
	Seed            int64   `json:"seed"`             // seeds the network, the sampler and the envs
	EvalEvery       int     `json:"eval_every"`       // greedy evaluation period in iterations
	EvalEpisodes    int     `json:"eval_episodes"`    // episodes per greedy evaluation
	CheckpointEvery int     `json:"checkpoint_every"` // checkpoint period in iterations (and always at the end)
	RewardThreshold float64 `json:"reward_threshold"` // greedy reward counted as "solved" (Copy-v0: 25, gym's threshold)
	StopAtThreshold bool    `json:"stop_at_threshold"`
	// NoThreshold marks a run on an env that registers no reward threshold, given none: no
	// solved/not-solved verdict (RewardThreshold is unused).
	NoThreshold bool `json:"no_threshold,omitempty"`
	// MaxLoss stops the run when a training step's loss exceeds it (0: no ceiling): a divergence
	// that stays finite is stopped like a NaN, with the last good checkpoint intact.
	MaxLoss float64 `json:"max_loss"`
}

// WeightMode is how the weight alpha moves over a run, worked out from the fields in one place
// (WeightModeOf): every consumer switches on it instead of testing the fields.
type WeightMode int

const (
	WeightFixed    WeightMode = iota // Alpha throughout
	WeightSchedule                   // the released code's decay from AlphaStart down to Alpha
	WeightLearned                    // the automatic weight, learned from Alpha on
)

// WeightMode is the config's weight mode (a validated config has at most one of a schedule and the
// automatic weight).
func (c AlgorithmConfig) WeightMode() WeightMode {
	switch {
	case c.AlphaAuto:
		return WeightLearned
	case c.AlphaStart > 0:
		return WeightSchedule
	}
	return WeightFixed
}

// WeightAuto is what WeightControl says of the automatic weight.
const WeightAuto = "auto"

// WeightControl describes how the weight moves: "" when it is fixed, WeightAuto, or the schedule
// ("from 0.1, ×0.708/100 it").
func (c AlgorithmConfig) WeightControl() string {
	switch c.WeightMode() {
	case WeightLearned:
		return WeightAuto
	case WeightSchedule:
		return fmt.Sprintf("from %g, ×%g/100 it", c.AlphaStart, c.AlphaDecay)
	}
	return ""
}
