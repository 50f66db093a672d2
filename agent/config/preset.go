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
// evidence it rests on.
type PresetValue struct {
	Field, Value string
	Algo         Algo
	Unless       []string
	OnGrid       bool
	Source       string
}

// sparseTrustRegionEvidence is the source of sparse PCL's replay ratio, lagged target and trust
// region over an action grid: the protocol of issue 51, its selection and its evaluation.
const sparseTrustRegionEvidence = "HalfCheetah 3^6, 1,000,000 steps, chosen on seeds 101-103 (3,585 ± 321 against the automatic weight's " +
	"684 ± 98 in the unified form, the default before) and evaluated once on seeds 1-5: last-20% return 3,041 ± 1,088 against " +
	"962 ± 272, paired +2,080, 97.5% interval 241 to 3,919, ahead in 5 of 5, 1.3-1.6 actions in support " +
	"(docs/results/halfcheetah-replay/sparse-evaluation-2, PROTOCOL.md); the separate form, which the trust region needs"

// softTrustRegionEvidence is the source of soft PCL's replay ratio, lagged target and trust
// region over an action grid: issue 51's selection and evaluation of soft PCL, where its automatic
// weight alone failed the collapse rule on a selection seed.
const softTrustRegionEvidence = "HalfCheetah 3^6, 1,000,000 steps, chosen on seeds 101-103 (3,127 ± 454, no collapse on any seed, against " +
	"476 ± 704 for the automatic weight alone, which `pcl train`'s collapse check flags on seed 101) and evaluated once on seeds 1-5: " +
	"last-20% return 3,158 ± 545 against the sparse default's 962 ± 272 before issue 51, paired +2,196, 95% interval 1,623 to 2,769, " +
	"ahead in 5 of 5 (docs/results/halfcheetah-replay/soft-selection and soft-evaluation, PROTOCOL.md)"

// evaluatedGridEvidence is the source of the action grid's defaults: every evaluated HalfCheetah run
// (issue 51's selection and evaluation, docs/results/halfcheetah-replay) passed --grid 3 --norm-obs.
const evaluatedGridEvidence = "HalfCheetah 3^6: all 79 runs of issue 51's selection (seeds 101-103) and evaluation (seeds 1-5) " +
	"ran with --grid 3 --norm-obs (docs/results/halfcheetah-replay/runs/*/config.json, PROTOCOL.md)"

// DefaultGrid is the action grid (points per dimension) of a run over a continuous action space
// given no --grid: the 3^6 grid every evaluated HalfCheetah run used (evaluatedGridEvidence). The
// 5^6 grid (--grid 5) takes the same levers until an experiment chooses its own.
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
// chosen by the settings experiments of docs/results/halfcheetah-settings (sparse PCL, α 0.5, 3^6
// grid, 250,000-300,000 env steps), the weight search of docs/results/halfcheetah-weights and the
// 1,000,000-step runs of docs/results/halfcheetah-paper, halfcheetah-alpha1 and auto-weight. A run
// over an action grid (--grid) given no weight flag learns its weight (the automatic weight), where
// the evidence for it was taken, and takes issue 51's levers (four steps per iteration, a lagged
// target, a trust region: soft PCL's relative entropy, sparse PCL's Tsallis counterpart;
// docs/results/halfcheetah-replay) unless its form or its lag is given; one given any weight flag
// keeps that weight fixed
// or scheduled, in the separate form, as before, and so do runs without a grid (CartPole's two
// actions: there the unified automatic weight did not learn, docs/halfcheetah.md §5). The
// algorithmic tasks do not use the preset: their defaults are Default's, the paper's.
func LongEpisodePreset() []PresetValue {
	return []PresetValue{
		{Field: "gamma", Value: "0.99", Source: "the paper's appendix (HalfCheetah)"},
		{Field: "learning_rate", Value: "5e-4", Source: "the larger of the paper's two learning rates"},
		{Field: "alpha", Value: "1", Algo: AlgoSparse, Source: "HalfCheetah 3^6, 5 seeds, 1,000,000 steps (docs/results/halfcheetah-alpha1): " +
			"last-20% return 898 ± 358 with 2-4 actions kept, against -100 ± 196 at α 0.01, whose deterministic policy falls back " +
			"(docs/results/halfcheetah-paper); 0.05, the algorithmic tasks' weight, collapses to one action within 100,000 steps"},
		{Field: "alpha", Value: "0.003", Algo: AlgoSoft, Source: "the weight search's choice (docs/results/halfcheetah-weights: last-20% " +
			"return 46 at 500,000 steps, the best of six weights 0.003-1, 2 seeds); -67 ± 343 over 5 seeds at 1,000,000 steps"},
		{Field: "alpha_auto", Value: "true", Algo: AlgoSparse, Unless: weightFields(), OnGrid: true, Source: "HalfCheetah 3^6, 5 seeds, 1,000,000 steps " +
			"(docs/results/auto-weight): the automatic weight from α 1 in the unified form, last-20% return 1,083 ± 167, " +
			"no seed collapsed, max-prob 0.90 at the end; against fixed α 1's 898 ± 358 (one seed fell back to 617, one never rose past 348)"},
		{Field: "train_steps", Value: "4", Algo: AlgoSparse, Unless: append(weightFields(), "form"), OnGrid: true, Source: sparseTrustRegionEvidence},
		{Field: "target_lag", Value: "0.9", Algo: AlgoSparse, Unless: append(weightFields(), "form"), OnGrid: true, Source: sparseTrustRegionEvidence},
		{Field: "trust_region", Value: "0.01", Algo: AlgoSparse, Unless: append(weightFields(), "form", "target_lag"), OnGrid: true, Source: sparseTrustRegionEvidence},
		{Field: "alpha_auto", Value: "true", Algo: AlgoSoft, Unless: weightFields(), OnGrid: true, Source: "HalfCheetah 3^6, 5 seeds, 1,000,000 steps " +
			"(docs/results/auto-weight): the automatic weight from τ 0.003, last-20% return 694 ± 733, ahead of fixed τ 0.003 " +
			"(-67 ± 343) in every seed"},
		{Field: "train_steps", Value: "4", Algo: AlgoSoft, Unless: append(weightFields(), "form"), OnGrid: true, Source: softTrustRegionEvidence},
		{Field: "target_lag", Value: "0.9", Algo: AlgoSoft, Unless: append(weightFields(), "form"), OnGrid: true, Source: softTrustRegionEvidence},
		{Field: "trust_region", Value: "0.01", Algo: AlgoSoft, Unless: append(weightFields(), "form", "target_lag"), OnGrid: true, Source: softTrustRegionEvidence},
		{Field: "norm_obs", Value: "true", OnGrid: true, Source: evaluatedGridEvidence},
		{Field: "value_scale", Value: "10", Source: "settings experiments: V reaches the return scale (about -40 at γ 0.99) in tens of thousands of steps " +
			"instead of hundreds of thousands; last-20% return 544 and 917 (seeds 1, 2) against 107 and 93 at scale 1"},
		{Field: "pg_scale", Value: "inverse-alpha", Source: "the released code's; plain gradients (the paper's Algorithm 1) gave 550 and -155 " +
			"alone and -35 with value-scale 10 (seed 1), no better"},
		{Field: "clip_norm", Value: "10", Source: "the released code's; it binds at every step (factor 0.001-0.1), and 40 (253) or none (-90) did not beat it"},
		{Field: "logit_init_scale", Value: "1", Source: "Glorot, as the released code; a near-uniform start (0.01) did worse (-54 against 107)"},
		{Field: "adam_eps", Value: "2e-4", Source: "the released code's; 1e-8 (319 at 150,000 steps, one seed) was within the base seeds' spread (215, 97)"},
		{Field: "critic_weight", Value: "1", Source: "the released code's; 0.1 (211 at 150,000 steps, one seed) was within the base seeds' spread"},
		{Field: "eval_every", Value: "50", Source: "one greedy episode every 5,000 steps: 200 points over 1M steps at a tenth of the cost of every 10"},
		{Field: "eval_episodes", Value: "1", Source: "HalfCheetah's greedy return varies little between start states"},
		{Field: "checkpoint_every", Value: "50", Source: "5,000 steps: a whole number of 1,000-step episodes, so a resume is exact; the replay file is ~110 MB at 1M steps"},
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
