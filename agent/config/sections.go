package config

import (
	"fmt"
	"math"
)

// The sections of Config, one per component of a run; each component's constructor takes its own
// section. Config embeds them all, so their fields read as Config's own (cfg.Alpha), and
// config.json lists the fields flat in the order of jsonOrder, whatever the sections.

// EnvConfig is the environment a run trains on.
type EnvConfig struct {
	// Env is the registered env id, e.g. "Copy-v0".
	Env string `json:"env" group:"learner" help:"environment id"`
	// Base is the alphabet size of the algorithmic task (|A| = 2*2*base for Copy).
	Base int `json:"base" group:"learner" help:"alphabet size of the algorithmic task"`
	// MaxSteps caps episode length; a cut-off episode is truncated (200 as in pcl_rl).
	MaxSteps int `json:"max_steps" group:"learner" help:"cap on episode length (cut-off episodes are truncated)"`
	// Curriculum is "shared" (default, like the reference runs) or "per-copy".
	Curriculum Curriculum `json:"curriculum" group:"learner" help:"\"shared\" (one curriculum per batch, as the reference runs) or \"per-copy\" (lstm)"`
}

// CollectConfig is how the fresh experience of an iteration is gathered: the batch of whole
// episodes of lstm runs, the copies and steps of mlp runs (copies that are not reset per
// iteration), and the exploring actions mixed into either.
type CollectConfig struct {
	// BatchSize is the fresh episodes per iteration; 400 (paper).
	BatchSize int `json:"batch_size" alias:"batch" group:"learner" help:"fresh episodes per iteration (lstm)"`
	// NumEnvs is the copies stepping together; 1 (paper: one trajectory).
	NumEnvs int `json:"num_envs" group:"mlp" help:"copies stepping together (mlp)"`
	// StepsPerIter is the env steps per copy per iteration; 100 (paper).
	StepsPerIter int `json:"steps_per_iter" group:"mlp" help:"env steps per copy per iteration (mlp)"`
	// Overlap steps the env copies for the next iteration, with a snapshot of the policy taken
	// before this iteration's training steps, while those steps run: the wall time approaches
	// the larger of env stepping and training instead of their sum, and the behaviour policy is
	// one iteration older (off-policy PCL learns from it all the same). Runs without it are what
	// they were, bit for bit.
	Overlap bool `json:"overlap,omitempty" group:"mlp" help:"step the env copies for the next iteration while the learner trains, with the policy before this iteration's steps (mlp; wall time near the larger of the two; needs GOMAXPROCS >= 2)"`
	// Explore is the probability that a step of a fresh episode takes a uniformly random action
	// instead of the policy's draw (0: the policy alone, as the paper samples). Path consistency
	// holds off-policy, so such episodes train and fill the replay like the policy's own.
	Explore float64 `json:"explore,omitempty" group:"learner" help:"probability that a sampled step takes a uniformly random action instead of the policy's (0: the policy alone)"`
	// ExploreShare is the fraction of each batch's copies, the first ones, that explore (0, like 1:
	// every copy). A shared curriculum levels up on consecutive perfect episodes in copy order,
	// which exploring copies rarely give: the copies after them keep it moving.
	ExploreShare float64 `json:"explore_share,omitempty" group:"learner" help:"fraction of the copies, the first ones, that --explore (0: every copy); with a curriculum, the rest keep it moving"`
	// ExploreDecay anneals Explore in the released code's form for its weight: the probability
	// at iteration it is Explore · ExploreDecay^(it/100) (0: a constant Explore). A fixed ε keeps
	// the exploring copies' episodes short of a perfect one at long curriculum lengths
	// (0.7^30 ≈ 2e-5 at ε 0.3 and 30 symbols); an annealed one hands them back to the policy.
	ExploreDecay float64 `json:"explore_decay,omitempty" help:"factor on --explore every 100 iterations, the released code's schedule form (0: a constant --explore)"`
	// ExploreTemp draws the exploring actions from softmax(z/ExploreTemp) of the policy's logits
	// instead of uniformly (0: uniformly). A sparse policy that writes a symbol wrongly with
	// certainty often ranks the right one second (Copy |A| = 160: a gap of 4-6 in z), which a
	// temperature of 2-3 proposes 9-14 times as often as 1/|A|.
	ExploreTemp float64 `json:"explore_temp,omitempty" help:"exploring actions from softmax(logits/T) instead of uniform ones (0: uniform)"`
}

// ExploreAt is the exploration probability at iteration it: Explore, annealed by ExploreDecay
// every 100 iterations when that is set.
func (c CollectConfig) ExploreAt(it int) float64 {
	if c.ExploreDecay == 0 {
		return c.Explore
	}
	return c.Explore * math.Pow(c.ExploreDecay, float64(it)/100)
}

// ReplayConfig is the experience replay: the prioritised episode replay of lstm runs and the step
// replay of mlp runs, from which sub-episodes are drawn by recency.
type ReplayConfig struct {
	// Replay takes one extra step on a replayed batch per iteration (paper: on).
	Replay bool `json:"replay" group:"replay" help:"take a second step on a replayed batch each iteration"`
	// ReplayBatchSize is the episodes per replay step; 0 means BatchSize.
	ReplayBatchSize int `json:"replay_batch_size" alias:"replay-batch" group:"replay" help:"episodes per replay step (0: --batch-size) (lstm)"`
	// ReplayCapacity is in episodes; 10,000 (paper).
	ReplayCapacity int `json:"replay_capacity" group:"replay" help:"replay capacity in episodes (lstm)"`
	// ReplayAlpha is the softmax temperature on priorities; 0.5 (paper).
	ReplayAlpha float64 `json:"replay_alpha" group:"replay" help:"softmax temperature on replay priorities"`
	// ReplayUniform is the uniform mixture weight; 0.1 (paper: 0.1 + 0.9 softmax).
	ReplayUniform float64 `json:"replay_uniform" group:"replay" help:"uniform weight of the replay sampling mixture"`
	// ReplayPriority is "reward" (default, the paper), "recency" (the released code) or "advantage".
	ReplayPriority Priority `json:"replay_priority" group:"replay" help:"\"reward\" (paper), \"recency\" (released code) or \"advantage\" (the episode's largest surplus over V when sampled: self-imitation's rule)"`
	// ReplayEviction is "random" (default) or "fifo".
	ReplayEviction Eviction `json:"replay_eviction" group:"replay" help:"\"random\" or \"fifo\""`
	// SubEpisodes is the sub-episodes per replay training batch; 25 (paper).
	SubEpisodes int `json:"sub_episodes" group:"mlp" help:"sub-episodes per replay training batch (mlp)"`
	// ReplaySteps is the step replay capacity in env steps; 1,000,000.
	ReplaySteps int `json:"replay_steps" group:"mlp" help:"step replay capacity in env steps (mlp)"`
	// RecencyWeight is w of the sub-episode sampling weight exp(w * (iteration - newest)); 0.01
	// (paper).
	RecencyWeight float64 `json:"recency_weight" group:"mlp" help:"sub-episode sampling weight exp(w * age) (mlp)"`
}

// UpdatesConfig is the gradient steps of an iteration: the on-policy step on the fresh
// experience and the number K of replay steps.
type UpdatesConfig struct {
	// OnPolicyStep adds a gradient step on the fresh sub-episodes before the replay step (the
	// paper takes the replay step alone).
	OnPolicyStep bool `json:"on_policy_step" group:"mlp" help:"also step on the fresh sub-episodes (mlp)"`
	// TrainSteps is the number of gradient steps per iteration (0 or 1: one, the paper's), each
	// on a batch of SubEpisodes drawn afresh from the replay: the replay ratio. Each env step is
	// then trained on about TrainSteps * SubEpisodes / NumEnvs rows (25 in the paper; the released
	// Trust-PCL settings about 640). Omitted from config.json at 0, so older runs keep theirs.
	TrainSteps int `json:"train_steps,omitempty" group:"learner" help:"replay gradient steps per iteration (0 or 1: one, the paper's), each on a batch drawn afresh from the replay: --sub-episodes of them for mlp runs (each env step then trained on train-steps × sub-episodes / num-envs rows, 25 at the paper's 1 × 25 / 1), --replay-batch-size episodes for lstm runs, after the on-policy step"`
}

// GradientSteps is the number of replay gradient steps per iteration: TrainSteps, at least 1.
func (c UpdatesConfig) GradientSteps() int { return max(c.TrainSteps, 1) }

// LearnerConfig is the consistency the learner minimises: the algorithm, its form, its weight
// (fixed, scheduled or learned), the path consistency's discount and length, the lagged network it
// bootstraps from and the trust region to it.
type LearnerConfig struct {
	// Algo is "sparse", "soft" or "tsallis".
	Algo Algo `json:"algo" group:"learner" help:"\"sparse\", \"soft\" or \"tsallis\""`
	// Form is "separate" (default) or "unified".
	Form Form `json:"form" group:"learner" help:"\"separate\" or \"unified\""`
	// Alpha is the regularisation weight: alpha for sparse/tsallis, tau for soft.
	Alpha float64 `json:"alpha" group:"learner" help:"regularisation weight: alpha of sparse and tsallis (default 0.05), tau of soft (default 0.025); the long-episode preset (mlp runs) gives sparse 1 and soft 0.003, and, to a run over an action grid given no weight flag, the automatic weight from there (sparse in the unified form)"`
	// TsallisQ is the entropic index q of the tsallis algo (1 < q; q = 2 is sparse).
	TsallisQ float64 `json:"tsallis_q" group:"learner" help:"entropic index q of --algo tsallis"`
	// AlphaStart and AlphaDecay, when AlphaStart > 0, make Alpha the floor of the released code's
	// schedule: alpha = max(AlphaStart * AlphaDecay^(iteration/100), Alpha).
	AlphaStart float64 `json:"alpha_start,omitempty" help:"start of a decaying weight, max(alpha-start * alpha-decay^(iteration/100), --alpha) (the released code's tau_start; 0: fixed --alpha)"`
	AlphaDecay float64 `json:"alpha_decay,omitempty" help:"factor on the weight every 100 iterations, with --alpha-start (the released code's tau_decay)"`
	// AlphaAuto learns alpha from Alpha on, steering the policy's max-prob toward a target that
	// rises from 0.5 to 0.9 (agent/weight.Auto).
	AlphaAuto bool `json:"alpha_auto,omitempty" help:"learn the weight from --alpha on, steering the policy's max-prob toward a target rising from 0.5 to 0.9"`
	// Gamma is the discount; 0.9 (paper).
	Gamma float64 `json:"gamma" group:"learner" help:"discount"`
	// Rollout is d of the d-step consistency; 10 (paper).
	Rollout int `json:"rollout" group:"learner" help:"d of the d-step path consistency"`
	// CriticWeight multiplies the gradient reaching V; 1.0 as in the pcl_rl README's PCL command.
	CriticWeight float64 `json:"critic_weight" group:"learner" help:"multiplier of the gradient reaching V"`
	// TargetLag, when > 0, bootstraps each consistency from a lagged copy of the network,
	// θ̄ ← TargetLag·θ̄ + (1−TargetLag)·θ after every gradient step (the released Trust-PCL's
	// use_target_values with target_network_lag 0.99); 0 bootstraps from the network itself.
	TargetLag float64 `json:"target_lag,omitempty" group:"learner" help:"bootstrap from a lagged copy of the network, θ̄ ← L·θ̄ + (1−L)·θ after each gradient step (the released Trust-PCL: 0.99; 0: from the network itself)"`
	// TrustRegion, when > 0, is the weight λ of a trust region to the lagged policy (needs
	// TargetLag; separate form; soft or sparse): soft PCL's relative entropy λ·KL(π‖π̃), as the
	// released Trust-PCL, and sparse PCL's Tsallis counterpart λ·½‖π − π̃‖². Either consistency
	// keeps its form with α + λ in place of α and a per-step shift read off π̃
	// (docs/trust-region.md).
	TrustRegion float64 `json:"trust_region,omitempty" group:"learner" help:"weight λ of a trust region to the lagged policy (needs --target-lag, separate form): soft λ·KL(π‖π̃) as Trust-PCL, sparse λ·½‖π − π̃‖² (0: none)"`
	// PGScale is "inverse-alpha" (default, the released code: policy gradient = grad(C^2/2)/alpha)
	// or "none" (the paper's Algorithm 1: plain grad(C^2/2)). The default follows the code because
	// its learning rate, clipping and Adam settings were tuned with that scaling.
	PGScale PGScale `json:"pg_scale" group:"learner" help:"\"inverse-alpha\" (released code) or \"none\" (paper)"`
}

// NetworkConfig is the network family, its sizes and initialisation, and the action grid that
// sets the size of its policy head over a Box action space.
type NetworkConfig struct {
	// Net is "auto" (default: lstm for Discrete observations, mlp for Box), "lstm" or "mlp".
	Net Net `json:"net" group:"mlp" help:"network family: \"auto\" (lstm for Discrete observations, mlp for Box), \"lstm\" or \"mlp\""`
	// Hidden is the number of LSTM units; 128 (paper).
	Hidden int `json:"hidden" group:"learner" help:"LSTM units (lstm)"`
	// MLPHidden is the units of each of the two tanh layers of the mlp networks; 64 (paper).
	MLPHidden int `json:"mlp_hidden" group:"mlp" help:"units of each tanh layer of the mlp networks"`
	// NormObs normalises Box observations of the mlp by running mean and std (checkpointed).
	NormObs bool `json:"norm_obs" group:"mlp" help:"normalise Box observations by running mean and std (mlp; on by default over an action grid)"`
	// LogitInitScale multiplies the initial weights and bias of the policy's logit (or Q) head, of
	// either network family; 1 keeps Glorot's, a small value starts the policy near uniform
	// (CleanRL's PPO: std 0.01), 0 exactly uniform.
	LogitInitScale float64 `json:"logit_init_scale" group:"learner" help:"factor on the initial policy logit head; small starts near uniform, 0 uniform"`
	// LambdaInit sets where the sparse (and Tsallis) multiplier's log-scale head starts: "one"
	// (default: bias 0, exp(head) = 1, as the paper's parameterisation initialises it) or "alpha"
	// (bias log α, so exp(head) starts at the weight: the multiplier's scale at the optimum).
	LambdaInit LambdaInit `json:"lambda_init" group:"learner" help:"start of the multiplier's scale exp(head): \"one\" or \"alpha\" (sparse, tsallis)"`
	// EmbedStd is the truncated-normal std of the LSTM's input embeddings; 0.01 (the released code).
	EmbedStd float64 `json:"embed_std" group:"learner" help:"std of the initial input embeddings (lstm)"`
	// ValueScale multiplies the mlp value network's output: V = ValueScale * NN(x). Under Adam the
	// output moves at most about lr * (H + 1) per step, so a return scale of -40 takes ~1,000
	// steps at scale 1 and ValueScale times fewer at a larger scale.
	ValueScale float64 `json:"value_scale" help:"V = value-scale * NN(x): larger reaches the return scale sooner (mlp, separate form)"`
	// Grid is the points per dimension of the action grid over a Box action space (0: none;
	// paper: 3 or 5).
	Grid int `json:"grid" group:"mlp" help:"points per dimension of the action grid over a Box action space (0: none; default for a Box action space: 3, the evaluated grid)"`
	// FusedOutput runs the output layer of a training step by blocks of whole sub-episodes
	// (pcl.Learner.Fused): the logits are never written out whole, and the blocks run on every
	// core. It changes the results at float rounding (the sums over rows are taken per block).
	FusedOutput bool `json:"fused_output,omitempty" group:"mlp" help:"run the training step's output layer, policy and consistencies by blocks of sub-episodes on every core, never writing all logits out (mlp, separate form; changes the results at float rounding; run it with OPENBLAS_NUM_THREADS=1)"`
}

// OptimConfig is the optimiser of every parameter and its gradient clipping.
type OptimConfig struct {
	// Optimizer is "adam" (default: the released code's), "sgd" (plain gradient steps, the paper's
	// Algorithm 1) or "rmsprop" (decay 0.9, epsilon AdamEps, no momentum).
	Optimizer Optimizer `json:"optimizer" group:"learner" help:"\"adam\", \"sgd\" (the paper's plain gradient steps) or \"rmsprop\""`
	// LearningRate is 0.005 (paper).
	LearningRate float64 `json:"learning_rate" alias:"lr" group:"learner" help:"learning rate of the optimiser"`
	// AdamBeta1 is 0.9 (TF default, used by pcl_rl).
	AdamBeta1 float64 `json:"adam_beta1" group:"learner" help:"Adam beta1"`
	// AdamBeta2 is 0.999.
	AdamBeta2 float64 `json:"adam_beta2" group:"learner" help:"Adam beta2"`
	// AdamEps is 2e-4 (pcl_rl); also RMSProp's epsilon.
	AdamEps float64 `json:"adam_eps" group:"learner" help:"Adam (and RMSProp) epsilon"`
	// ClipNorm is the global-norm clip; 10 (pcl_rl README PCL command; the paper is silent).
	ClipNorm float64 `json:"clip_norm" group:"learner" help:"global gradient-norm clip (0: off)"`
}

// RunConfig is the run's length, seed, evaluation, checkpoints and stopping rules.
type RunConfig struct {
	// Iters is the number of training iterations.
	Iters int `json:"iters" help:"total number of training iterations (with --resume: the run's new total, above the iterations done)"`
	// Seed seeds the network, the sampler and the envs.
	Seed int64 `json:"seed" group:"learner" help:"random seed"`
	// EvalEvery is the greedy evaluation period in iterations.
	EvalEvery int `json:"eval_every" help:"greedy evaluation period (0: off)"`
	// EvalEpisodes is the episodes per greedy evaluation.
	EvalEpisodes int `json:"eval_episodes" help:"episodes per greedy evaluation"`
	// CheckpointEvery is the checkpoint period in iterations (and always at the end).
	CheckpointEvery int `json:"checkpoint_every" help:"checkpoint period (0: only at the end)"`
	// RewardThreshold is the greedy reward counted as "solved" (Copy-v0: 25, gym's threshold).
	RewardThreshold float64 `json:"reward_threshold" alias:"threshold" help:"greedy reward that counts as solved; not given: the env's registered reward_threshold (Copy 25, DuplicatedInput 9, RepeatCopy 75, Reverse 25, ReversedAddition 25; Gymnasium's spec for other envs, e.g. CartPole-v1 475, FrozenLake-v1 0.7), none when it registers none"`
	StopAtThreshold bool    `json:"stop_at_threshold" help:"stop once greedy reward reaches --reward-threshold"`
	// NoThreshold marks a run on an env that registers no reward threshold, given none: no
	// solved/not-solved verdict (RewardThreshold is unused).
	NoThreshold bool `json:"no_threshold,omitempty" flag:"-"`
	// MaxLoss stops the run when a training step's loss exceeds it (0: no ceiling): a divergence
	// that stays finite is stopped like a NaN, with the last good checkpoint intact.
	MaxLoss float64 `json:"max_loss" help:"stop the run when a training step's loss exceeds this (0: no ceiling)"`
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
func (c LearnerConfig) WeightMode() WeightMode {
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
func (c LearnerConfig) WeightControl() string {
	switch c.WeightMode() {
	case WeightLearned:
		return WeightAuto
	case WeightSchedule:
		return fmt.Sprintf("from %g, ×%g/100 it", c.AlphaStart, c.AlphaDecay)
	}
	return ""
}
