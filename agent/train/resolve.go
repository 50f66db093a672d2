package train

import (
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/success"
)

// Resolve applies, in one place, every default a run's config takes from the fields that were not
// given (given reports whether a field was set, by its flag name): the algorithm's default weight
// (alpha), the env's solved threshold (threshold), the network family of "auto" (ResolveNet), and
// the family's own defaults (Family.defaults: for the mlp family the long-episode preset,
// config.LongEpisodePreset) on the fields not given.
func Resolve(cfg config.Config, given func(name string) bool) (config.Config, error) {
	if !given("alpha") {
		cfg.Alpha = config.DefaultAlpha(cfg.Algo, cfg.Base)
	}
	if !given("threshold") {
		cfg.RewardThreshold = success.DefaultThreshold(cfg.Env, cfg.RewardThreshold)
	}
	cfg = ResolveNet(cfg)
	return FamilyOf(cfg).defaults(cfg, given)
}
