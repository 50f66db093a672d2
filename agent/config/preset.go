package config

import (
	"flag"
	"fmt"
	"io"
	"slices"
)

// PresetValue is one value of a preset: the field it sets (by JSON name), the value as the
// field's flag would be given, the algorithm it applies to ("" for every one), the fields whose
// being given keeps it off (Unless), whether it applies only over an action grid (OnGrid) and the
// id of the evidence it rests on.
type PresetValue struct {
	Field, Value string
	Algo         Algo
	Unless       []string
	OnGrid       bool
	// Evidence is the id of the evidence for the value: the heading of its section in
	// docs/presets.md, which holds the experiments and their numbers.
	Evidence string
}

// DefaultGrid is the action grid (points per dimension) of a run over a continuous action space
// given no --grid: the 3^6 grid every evaluated HalfCheetah run used (evidence
// "halfcheetah-replay-grid"). The 5^6 grid (--grid 5) takes the same levers until an experiment
// chooses its own.
const DefaultGrid = 3

// ApplyGridDefault gives a run over a continuous action space that was given no grid the evaluated
// one (DefaultGrid) and reports whether it did. The grid's other defaults (observation
// normalisation, the levers) are the long-episode preset's OnGrid values, applied after it.
func (c *Config) ApplyGridDefault(given func(field string) bool) bool {
	if given("grid") || c.Grid != 0 {
		return false
	}
	c.Grid = DefaultGrid
	return true
}

// weightFields are the fields that set a run's weight. A run given any of them keeps the weight it
// was given, in the form it was given (separate unless --form says otherwise); the automatic
// weight in the preset is for runs given none.
func weightFields() []string { return []string{"alpha", "alpha_start", "alpha_decay", "alpha_auto"} }

// LongEpisodePreset is the configuration of long-episode runs (net mlp: HalfCheetah and the
// other Box envs), applied to every field not given. The paper gives only the discount, the
// learning-rate search, d, the batch and the replay for HalfCheetah; every other value here was
// chosen by experiment, and each cites its evidence by id (docs/presets.md). A run over an action
// grid (--grid) given no weight flag learns its weight (the automatic weight), where the evidence
// for it was taken, and takes issue 51's levers (four steps per iteration, a lagged target, a
// trust region: soft PCL's relative entropy, sparse PCL's Tsallis counterpart) unless its form or
// its lag is given; one given any weight flag keeps that weight fixed or scheduled, in the
// separate form, as before, and so do runs without a grid (CartPole's two actions: there the
// unified automatic weight did not learn, docs/halfcheetah.md §5). The algorithmic tasks do not
// use the preset: their defaults are Default's, the paper's.
func LongEpisodePreset() []PresetValue {
	return []PresetValue{
		{Field: "gamma", Value: "0.99", Evidence: "paper"},
		{Field: "learning_rate", Value: "5e-4", Evidence: "paper"},
		{Field: "alpha", Value: "1", Algo: AlgoSparse, Evidence: "halfcheetah-alpha1"},
		{Field: "alpha", Value: "0.003", Algo: AlgoSoft, Evidence: "halfcheetah-weights"},
		{Field: "alpha_auto", Value: "true", Algo: AlgoSparse, Unless: weightFields(), OnGrid: true, Evidence: "auto-weight"},
		{Field: "train_steps", Value: "4", Algo: AlgoSparse, Unless: append(weightFields(), "form"), OnGrid: true, Evidence: "halfcheetah-replay"},
		{Field: "target_lag", Value: "0.9", Algo: AlgoSparse, Unless: append(weightFields(), "form"), OnGrid: true, Evidence: "halfcheetah-replay"},
		{Field: "trust_region", Value: "0.01", Algo: AlgoSparse, Unless: append(weightFields(), "form", "target_lag"), OnGrid: true, Evidence: "halfcheetah-replay"},
		{Field: "alpha_auto", Value: "true", Algo: AlgoSoft, Unless: weightFields(), OnGrid: true, Evidence: "auto-weight"},
		{Field: "train_steps", Value: "4", Algo: AlgoSoft, Unless: append(weightFields(), "form"), OnGrid: true, Evidence: "halfcheetah-replay"},
		{Field: "target_lag", Value: "0.9", Algo: AlgoSoft, Unless: append(weightFields(), "form"), OnGrid: true, Evidence: "halfcheetah-replay"},
		{Field: "trust_region", Value: "0.01", Algo: AlgoSoft, Unless: append(weightFields(), "form", "target_lag"), OnGrid: true, Evidence: "halfcheetah-replay"},
		{Field: "norm_obs", Value: "true", OnGrid: true, Evidence: "halfcheetah-replay-grid"},
		{Field: "value_scale", Value: "10", Evidence: "halfcheetah-settings"},
		{Field: "pg_scale", Value: "inverse-alpha", Evidence: "halfcheetah-settings"},
		{Field: "clip_norm", Value: "10", Evidence: "halfcheetah-settings"},
		{Field: "logit_init_scale", Value: "1", Evidence: "halfcheetah-settings"},
		{Field: "adam_eps", Value: "2e-4", Evidence: "halfcheetah-settings"},
		{Field: "critic_weight", Value: "1", Evidence: "halfcheetah-settings"},
		{Field: "eval_every", Value: "50", Evidence: "schedule"},
		{Field: "eval_episodes", Value: "1", Evidence: "schedule"},
		{Field: "checkpoint_every", Value: "50", Evidence: "schedule"},
	}
}

// ApplyLongEpisodeDefaults sets the LongEpisodePreset's values (those of c.Algo or of every
// algorithm) on the fields that were not given (given reports a field, by JSON name, as given),
// leaving out a value any of whose Unless fields was given, and an OnGrid value when the run has
// no action grid (c.Grid 0). A value is parsed as the field's flag parses it.
func (c *Config) ApplyLongEpisodeDefaults(given func(field string) bool) error {
	fs := flag.NewFlagSet("preset", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.RegisterFlags(fs)
	flags := FieldFlags()
	for _, v := range LongEpisodePreset() {
		if given(v.Field) || (v.Algo != "" && v.Algo != c.Algo) || slices.ContainsFunc(v.Unless, given) || (v.OnGrid && c.Grid == 0) {
			continue
		}
		if err := fs.Set(flags[v.Field], v.Value); err != nil {
			return fmt.Errorf("config: long-episode preset: %s = %s: %w", v.Field, v.Value, err)
		}
	}
	return nil
}
