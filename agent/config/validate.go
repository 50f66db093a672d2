package config

import (
	"math"
	"strings"
)

// problems collects a config's invalid fields, each a *FieldError, in the order they are found.
type problems []error

// bad records that field, whose value is v, is invalid for reason (which may name the related
// fields with %s, as FieldError words them).
func (p *problems) bad(field string, v any, reason string, related ...string) {
	*p = append(*p, &FieldError{Field: field, Value: v, Reason: reason, Related: related})
}

func (p *problems) atLeastOne(field string, v int) {
	if v < 1 {
		p.bad(field, v, "must be >= 1")
	}
}

func (c EnvConfig) validate(p *problems) {
	if c.Env == "" {
		p.bad("env", `""`, "must name an environment")
	}
	if c.Base < 2 {
		p.bad("base", c.Base, "must be >= 2")
	}
	p.atLeastOne("max_steps", c.MaxSteps)
	if c.Curriculum != CurriculumShared && c.Curriculum != CurriculumPerCopy {
		p.bad("curriculum", c.Curriculum, `must be "shared" or "per-copy"`)
	}
}

func (c LearnerConfig) validate(p *problems) {
	switch c.Algo {
	case AlgoSparse, AlgoSoft, AlgoTsallis:
	default:
		p.bad("algo", c.Algo, `must be "sparse", "soft" or "tsallis"`)
	}
	if c.Form != FormSeparate && c.Form != FormUnified {
		p.bad("form", c.Form, `must be "separate" or "unified"`)
	}
	if !(c.Alpha > 0) {
		p.bad("alpha", c.Alpha, "must be > 0")
	}
	c.validateWeightControl(p)
	if c.Algo == AlgoTsallis && !(c.TsallisQ > 1) {
		p.bad("tsallis_q", c.TsallisQ, "must be > 1 (q = 1 is soft PCL: use %s soft)", "algo")
	}
	if !(c.Gamma > 0 && c.Gamma <= 1) {
		p.bad("gamma", c.Gamma, "must be in (0, 1]")
	}
	p.atLeastOne("rollout", c.Rollout)
	if !(c.CriticWeight >= 0) {
		p.bad("critic_weight", c.CriticWeight, "must be >= 0")
	}
	if c.PGScale != PGScaleInverseAlpha && c.PGScale != PGScaleNone {
		p.bad("pg_scale", c.PGScale, `must be "inverse-alpha" or "none"`)
	}
	if !(c.TargetLag >= 0 && c.TargetLag < 1) {
		p.bad("target_lag", c.TargetLag, "must be in [0, 1)")
	}
}

// validateWeightControl checks the schedule and the automatic weight: one at most.
func (c LearnerConfig) validateWeightControl(p *problems) {
	if c.AlphaStart != 0 {
		if !(c.AlphaStart >= c.Alpha) || math.IsInf(c.AlphaStart, 0) {
			p.bad("alpha_start", c.AlphaStart, "must be at least %s, the schedule's floor", "alpha")
		}
		if !(c.AlphaDecay > 0 && c.AlphaDecay <= 1) {
			p.bad("alpha_decay", c.AlphaDecay, "must be in (0, 1] with %s", "alpha_start")
		}
		if c.AlphaAuto {
			p.bad("alpha_auto", c.AlphaAuto, "excludes %s (a schedule or the automatic weight, not both)", "alpha_start")
		}
	} else if c.AlphaDecay != 0 {
		p.bad("alpha_decay", c.AlphaDecay, "needs %s", "alpha_start")
	}
}

func (c NetworkConfig) validate(p *problems) {
	if c.Net != NetAuto && c.Net != NetLSTM && c.Net != NetMLP {
		p.bad("net", c.Net, `must be "auto", "lstm" or "mlp"`)
	}
	p.atLeastOne("hidden", c.Hidden)
	p.atLeastOne("mlp_hidden", c.MLPHidden)
	if c.Grid == 1 || c.Grid < 0 {
		p.bad("grid", c.Grid, "must be 0 (no grid) or >= 2")
	}
	if !(c.LogitInitScale >= 0) {
		p.bad("logit_init_scale", c.LogitInitScale, "must be >= 0")
	}
	if c.LambdaInit != LambdaInitOne && c.LambdaInit != LambdaInitAlpha {
		p.bad("lambda_init", c.LambdaInit, `must be "one" or "alpha"`)
	}
	if !(c.EmbedStd > 0) {
		p.bad("embed_std", c.EmbedStd, "must be > 0")
	}
	if !(c.ValueScale > 0) {
		p.bad("value_scale", c.ValueScale, "must be > 0")
	}
}

func (c CollectConfig) validate(p *problems) {
	p.atLeastOne("batch_size", c.BatchSize)
	p.atLeastOne("num_envs", c.NumEnvs)
	p.atLeastOne("steps_per_iter", c.StepsPerIter)
	c.validateExplore(p)
}

func (c ReplayConfig) validate(p *problems) {
	if c.ReplayBatchSize < 0 {
		p.bad("replay_batch_size", c.ReplayBatchSize, "must be >= 0 (0 means %s)", "batch_size")
	}
	if c.Replay && c.ReplayCapacity < 1 {
		p.bad("replay_capacity", c.ReplayCapacity, "must be >= 1")
	}
	if !(c.ReplayAlpha >= 0) {
		p.bad("replay_alpha", c.ReplayAlpha, "must be >= 0")
	}
	if !(c.ReplayUniform >= 0 && c.ReplayUniform <= 1) {
		p.bad("replay_uniform", c.ReplayUniform, "must be in [0, 1]")
	}
	if c.ReplayPriority != PriorityReward && c.ReplayPriority != PriorityRecency && c.ReplayPriority != PriorityAdvantage {
		p.bad("replay_priority", c.ReplayPriority, `must be "reward", "recency" or "advantage"`)
	}
	if c.ReplayEviction != EvictRandom && c.ReplayEviction != EvictFIFO {
		p.bad("replay_eviction", c.ReplayEviction, `must be "random" or "fifo"`)
	}
	p.atLeastOne("sub_episodes", c.SubEpisodes)
	p.atLeastOne("replay_steps", c.ReplaySteps)
	if !(c.RecencyWeight >= 0) || math.IsInf(c.RecencyWeight, 0) {
		p.bad("recency_weight", c.RecencyWeight, "must be finite and >= 0")
	}
}

func (c UpdatesConfig) validate(p *problems) {
	if c.TrainSteps < 0 {
		p.bad("train_steps", c.TrainSteps, "must be >= 0 (0 or 1: one gradient step per iteration)")
	}
}

// validateTrustRegion checks the trust region against the fields it needs from other sections:
// a lagged network, the separate form, soft or sparse PCL.
func (c Config) validateTrustRegion(p *problems) {
	if !(c.TrustRegion >= 0) || math.IsInf(c.TrustRegion, 0) {
		p.bad("trust_region", c.TrustRegion, "must be finite and >= 0")
		return
	}
	if c.TrustRegion == 0 {
		return
	}
	if c.TargetLag == 0 {
		p.bad("trust_region", c.TrustRegion, "needs a lagged policy: set %s", "target_lag")
	}
	if c.Form != FormSeparate {
		p.bad("trust_region", c.TrustRegion, "needs the separate form (the unified form's policy would depend on the lagged one): set %s separate", "form")
	}
	if c.Algo != AlgoSoft && c.Algo != AlgoSparse {
		p.bad("trust_region", c.TrustRegion, "is defined for soft and sparse PCL, not %s "+string(c.Algo), "algo")
	}
}

func (c OptimConfig) validate(p *problems) {
	if c.Optimizer != OptimizerAdam && c.Optimizer != OptimizerSGD && c.Optimizer != OptimizerRMSProp {
		p.bad("optimizer", c.Optimizer, `must be "adam", "sgd" or "rmsprop"`)
	}
	if !(c.LearningRate > 0) {
		p.bad("learning_rate", c.LearningRate, "must be > 0")
	}
	if !(c.AdamBeta1 >= 0 && c.AdamBeta1 < 1) {
		p.bad("adam_beta1", c.AdamBeta1, "must be in [0, 1)")
	}
	if !(c.AdamBeta2 >= 0 && c.AdamBeta2 < 1) {
		p.bad("adam_beta2", c.AdamBeta2, "must be in [0, 1)")
	}
	if !(c.AdamEps > 0) {
		p.bad("adam_eps", c.AdamEps, "must be > 0")
	}
	if !(c.ClipNorm >= 0) {
		p.bad("clip_norm", c.ClipNorm, "must be >= 0 (0 disables clipping)")
	}
}

// validateExplore checks the exploring copies' settings, each of which needs explore.
func (c CollectConfig) validateExplore(p *problems) {
	if !(c.Explore >= 0 && c.Explore < 1) {
		p.bad("explore", c.Explore, "must be in [0, 1)")
	}
	if !(c.ExploreShare >= 0 && c.ExploreShare <= 1) {
		p.bad("explore_share", c.ExploreShare, "must be in [0, 1] (0: every copy)")
	}
	if c.ExploreShare > 0 && c.Explore == 0 {
		p.bad("explore_share", c.ExploreShare, "needs %s", "explore")
	}
	if !(c.ExploreTemp >= 0) || math.IsInf(c.ExploreTemp, 0) {
		p.bad("explore_temp", c.ExploreTemp, "must be finite and >= 0 (0: uniform exploring actions)")
	} else if c.ExploreTemp > 0 && c.Explore == 0 {
		p.bad("explore_temp", c.ExploreTemp, "needs %s", "explore")
	}
	if !(c.ExploreDecay >= 0 && c.ExploreDecay <= 1) {
		p.bad("explore_decay", c.ExploreDecay, "must be in (0, 1] (0: a constant explore)")
	} else if c.ExploreDecay > 0 && c.Explore == 0 {
		p.bad("explore_decay", c.ExploreDecay, "needs %s", "explore")
	}
}

// validate checks the run's settings; env names the environment in the threshold's message.
func (c RunConfig) validate(p *problems, env string) {
	if c.Iters < 0 {
		p.bad("iters", c.Iters, "must be >= 0")
	}
	if c.NoThreshold && c.StopAtThreshold {
		p.bad("stop_at_threshold", c.StopAtThreshold, "needs a reward threshold, and "+strings.ReplaceAll(env, "%", "%%")+" registers none: give %s", "reward_threshold")
	}
	if c.EvalEvery < 0 {
		p.bad("eval_every", c.EvalEvery, "must be >= 0 (0 disables greedy evaluation)")
	}
	p.atLeastOne("eval_episodes", c.EvalEpisodes)
	if c.MaxLoss < 0 {
		p.bad("max_loss", c.MaxLoss, "must be >= 0 (0: no ceiling)")
	}
	if c.CheckpointEvery < 0 {
		p.bad("checkpoint_every", c.CheckpointEvery, "must be >= 0 (0: only at the end)")
	}
}
