package train

import (
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/success"
)

// ThresholdLookup returns the reward threshold env registers (Gymnasium's reward_threshold), with
// ok false when it registers none. envmaker.Maker.RewardThreshold is one, given a context.
type ThresholdLookup func(env string) (threshold float64, ok bool, err error)

// Resolve applies, in one place, every default a run's config takes for the fields that were not
// given (given reports whether a field was set, by its JSON name, e.g. "learning_rate"):
//
//   - alpha: the algorithm's default weight (config.DefaultAlpha);
//   - reward_threshold: an algorithmic task's own (success.DefaultThreshold); with a lookup, then
//     the one the env registers, or none (NoThreshold) when it registers none;
//   - net "auto": the env's network family (ResolveNet);
//   - the family's own defaults (Family.defaults): for the mlp family the long-episode preset
//     (config.LongEpisodePreset).
//
// With a lookup Resolve also validates the result, before the lookup, so that an invalid config
// starts no env server; without one (nil) the caller validates, after any change of its own.
func Resolve(cfg config.Config, given func(field string) bool, lookup ThresholdLookup) (config.Config, error) {
	if !given("alpha") {
		cfg.Alpha = config.DefaultAlpha(cfg.Algo, cfg.Base)
	}
	if !given("reward_threshold") {
		cfg.RewardThreshold = success.DefaultThreshold(cfg.Env, cfg.RewardThreshold)
	}
	cfg = ResolveNet(cfg)
	cfg, err := FamilyOf(cfg).defaults(cfg, given)
	if err != nil {
		return cfg, err
	}
	if lookup == nil {
		return cfg, nil
	}
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	if given("reward_threshold") {
		return cfg, nil
	}
	th, ok, err := lookup(cfg.Env)
	if err != nil {
		return cfg, err // the lookup's error names the env
	}
	cfg.RewardThreshold, cfg.NoThreshold = th, !ok
	if !ok {
		cfg.RewardThreshold = 0
	}
	return cfg, cfg.Validate()
}

// ActionsLookup reports whether env's action space is continuous (a Box), which a run can learn
// only over an action grid. envmaker.Maker.ContinuousActions is one, given a context.
type ActionsLookup func(env string) (continuous bool, err error)

// ResolveGrid gives a run of the mlp family over a continuous action space that was given no
// --grid the evaluated grid (config.DefaultGrid), and reports whether it did; Resolve, called
// after it, then applies the grid's other defaults (observation normalisation, the levers). Only a
// run of the mlp family given no grid asks the lookup.
func ResolveGrid(cfg config.Config, given func(field string) bool, continuous ActionsLookup) (config.Config, bool, error) {
	if given("grid") || cfg.Grid != 0 || FamilyOf(cfg).Net() != config.NetMLP {
		return cfg, false, nil
	}
	ok, err := continuous(cfg.Env)
	if err != nil || !ok {
		return cfg, false, err
	}
	return cfg, cfg.ApplyGridDefault(given), nil
}
