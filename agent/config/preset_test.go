package config

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The algorithmic tasks' defaults are the paper's and the Figure-1 grid's: the long-episode preset
// must not move them. This literal is Default as the grid ran it.
func TestAlgorithmicDefaultsUnchanged(t *testing.T) {
	var want Config // field by field, so the values stay those the grid ran whatever the sections
	want.Env, want.Base, want.MaxSteps, want.Curriculum = "Copy-v0", 5, 200, CurriculumShared
	want.Algo, want.Form, want.Alpha, want.TsallisQ = AlgoSparse, FormSeparate, 0.05, 1.5
	want.Gamma, want.Rollout, want.CriticWeight, want.PGScale = 0.9, 10, 1.0, PGScaleInverseAlpha
	want.Net, want.Hidden, want.MLPHidden, want.LogitInitScale, want.ValueScale = NetAuto, 128, 64, 1, 1
	want.LambdaInit, want.EmbedStd, want.Optimizer = LambdaInitOne, 0.01, "adam"
	want.NumEnvs, want.StepsPerIter, want.SubEpisodes, want.ReplaySteps, want.RecencyWeight = 1, 100, 25, 1_000_000, 0.01
	want.LearningRate, want.AdamBeta1, want.AdamBeta2, want.AdamEps, want.ClipNorm = 0.005, 0.9, 0.999, 2e-4, 10
	want.BatchSize, want.Replay, want.ReplayBatchSize, want.ReplayCapacity = 400, true, 0, 10000
	want.ReplayAlpha, want.ReplayUniform, want.ReplayPriority, want.ReplayEviction = 0.5, 0.1, PriorityReward, EvictRandom
	want.Iters, want.Seed, want.EvalEvery, want.EvalEpisodes, want.CheckpointEvery = 2000, 1, 5, 100, 50
	want.RewardThreshold = 25
	if got := Default(); !reflect.DeepEqual(got, want) {
		t.Errorf("Default() changed:\n got %+v\nwant %+v", got, want)
	}
}

// flagValue is the string form of flag name on c.
func flagValue(t *testing.T, c *Config, name string) string {
	t.Helper()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.RegisterFlags(fs)
	f := fs.Lookup(name)
	if f == nil {
		t.Fatalf("no flag --%s", name)
	}
	return f.Value.String()
}

// Every preset value cites evidence that docs/presets.md holds, as a section headed by its id.
func TestLongEpisodePresetEvidence(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "presets.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range LongEpisodePreset() {
		if v.Evidence == "" || !strings.Contains(string(doc), "\n## "+v.Evidence+"\n") {
			t.Errorf("%s (%s): evidence %q has no section in docs/presets.md", v.Field, v.Algo, v.Evidence)
		}
	}
}

// Every preset value names a field with a flag and parses; with nothing given each lands on its
// field (for its algorithm only), and a field given keeps its value.
func TestLongEpisodePreset(t *testing.T) {
	for _, algo := range []Algo{AlgoSparse, AlgoSoft, AlgoTsallis} {
		c := Default()
		c.Algo, c.Grid = algo, 3 // over an action grid, where every value applies
		if err := c.ApplyLongEpisodeDefaults(func(string) bool { return false }); err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("%s: the preset is invalid: %v", algo, err)
		}
		flags := FieldFlags()
		for _, v := range LongEpisodePreset() {
			name := flags[v.Field]
			if v.Algo != "" && v.Algo != algo {
				continue
			}
			ref := Default()
			ref.Algo = algo
			fs := flag.NewFlagSet("ref", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			ref.RegisterFlags(fs)
			if err := fs.Set(name, v.Value); err != nil {
				t.Fatalf("%s (--%s) %s: %v", v.Field, name, v.Value, err)
			}
			if got, want := flagValue(t, &c, name), fs.Lookup(name).Value.String(); got != want {
				t.Errorf("%s: %s is %s after the preset, want %s", algo, v.Field, got, want)
			}
		}
		// Every field given keeps the value it was given.
		given := Default()
		given.Algo, given.Gamma, given.LearningRate, given.EvalEvery, given.Alpha = algo, 0.5, 0.123, 7, 0.77
		given.PGScale, given.ClipNorm, given.ValueScale, given.LogitInitScale, given.AdamEps = PGScaleInverseAlpha, 3, 2, 0.5, 1e-3
		before := given
		if err := given.ApplyLongEpisodeDefaults(func(string) bool { return true }); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(given, before) {
			t.Errorf("%s: the preset overrode given flags:\n got %+v\nwant %+v", algo, given, before)
		}
	}
}

// A run over an action grid given no weight gets the automatic weight with issue 51's levers (in
// the separate form the trust region needs; sparse given --form unified: the automatic weight
// alone, the default before); a run given any weight field, or without a grid, keeps a fixed
// weight in the separate form, exactly as before the automatic default.
func TestLongEpisodePresetWeight(t *testing.T) {
	cases := []struct {
		algo  Algo
		grid  int
		given []string
		auto  bool
		form  Form
		alpha float64
	}{
		{AlgoSparse, 3, nil, true, FormSeparate, 1},
		{AlgoSparse, 3, []string{"form"}, true, FormUnified, 1}, // --form unified given
		{AlgoSparse, 5, []string{"alpha"}, false, FormSeparate, 0.05},
		{AlgoSparse, 3, []string{"alpha_auto"}, false, FormSeparate, 1}, // --alpha-auto=false given, as written
		{AlgoSparse, 3, []string{"alpha_start", "alpha_decay"}, false, FormSeparate, 1},
		{AlgoSparse, 0, nil, false, FormSeparate, 1}, // no action grid (CartPole): the fixed weight
		{AlgoSoft, 3, nil, true, FormSeparate, 0.003},
		{AlgoSoft, 5, nil, true, FormSeparate, 0.003},
		{AlgoSoft, 3, []string{"target_lag"}, true, FormSeparate, 0.003}, // --target-lag given: no trust region either
		{AlgoSoft, 3, []string{"alpha"}, false, FormSeparate, 0.05},
		{AlgoSoft, 0, nil, false, FormSeparate, 0.003},
		{AlgoTsallis, 3, nil, false, FormSeparate, 0.05},
	}
	for _, tc := range cases {
		c := Default()
		c.Algo, c.Grid = tc.algo, tc.grid
		if slices.Contains(tc.given, "form") {
			c.Form = FormUnified
		}
		if slices.Contains(tc.given, "alpha_start") {
			c.AlphaStart, c.AlphaDecay = 10, 0.9
		}
		given := func(f string) bool { return slices.Contains(tc.given, f) }
		if err := c.ApplyLongEpisodeDefaults(given); err != nil {
			t.Fatal(err)
		}
		if c.AlphaAuto != tc.auto || c.Form != tc.form || c.Alpha != tc.alpha {
			t.Errorf("%s grid %d given %v: alpha_auto %v, form %s, alpha %v; want %v, %s, %v", tc.algo, tc.grid, tc.given, c.AlphaAuto, c.Form, c.Alpha, tc.auto, tc.form, tc.alpha)
		}
		// Sparse and soft PCL over a grid given no weight also get issue 51's levers: four steps
		// per iteration, a lagged target and a trust region; every other case none.
		levers := tc.algo != AlgoTsallis && tc.grid > 0 && tc.given == nil
		if got := c.TrainSteps == 4 && c.TargetLag == 0.9 && c.TrustRegion == 0.01; got != levers {
			t.Errorf("%s grid %d given %v: train_steps %d, target_lag %v, trust_region %v; issue 51's levers %v", tc.algo, tc.grid, tc.given, c.TrainSteps, c.TargetLag, c.TrustRegion, levers)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("%s given %v: %v", tc.algo, tc.given, err)
		}
	}
}

// A run over a continuous action space given no grid gets the evaluated one (DefaultGrid); a grid
// given, or already set, is kept.
func TestApplyGridDefault(t *testing.T) {
	cases := []struct {
		name    string
		grid    int
		given   []string
		want    int
		applied bool
	}{
		{"nothing given", 0, nil, DefaultGrid, true},
		{"--grid 5", 5, []string{"grid"}, 5, false},
		{"--grid 0 given", 0, []string{"grid"}, 0, false},
		{"set without the flag (a config file)", 5, nil, 5, false},
	}
	for _, tc := range cases {
		c := Default()
		c.Grid = tc.grid
		applied := c.ApplyGridDefault(func(f string) bool { return slices.Contains(tc.given, f) })
		if c.Grid != tc.want || applied != tc.applied {
			t.Errorf("%s: grid %d (applied %v), want %d (%v)", tc.name, c.Grid, applied, tc.want, tc.applied)
		}
	}
}

// Observation normalisation is on over an action grid unless --norm-obs was given (an explicit
// --norm-obs=false is honoured), and stays off without a grid (CartPole).
func TestLongEpisodePresetNormObs(t *testing.T) {
	cases := []struct {
		name      string
		grid      int
		given     []string
		givenNorm bool
		want      bool
	}{
		{"3^6", 3, nil, false, true},
		{"5^6", 5, nil, false, true},
		{"--norm-obs=false given", 3, []string{"norm_obs"}, false, false},
		{"--norm-obs given", 3, []string{"norm_obs"}, true, true},
		{"no grid", 0, nil, false, false},
	}
	for _, tc := range cases {
		c := Default()
		c.Grid, c.NormObs = tc.grid, tc.givenNorm
		if err := c.ApplyLongEpisodeDefaults(func(f string) bool { return slices.Contains(tc.given, f) }); err != nil {
			t.Fatal(err)
		}
		if c.NormObs != tc.want {
			t.Errorf("%s: norm_obs %v, want %v", tc.name, c.NormObs, tc.want)
		}
	}
}
