package config

import (
	"flag"
	"io"
	"reflect"
	"testing"
)

// The algorithmic tasks' defaults are the paper's and the Figure-1 grid's: the long-episode preset
// must not move them. This literal is Default as the grid ran it.
func TestAlgorithmicDefaultsUnchanged(t *testing.T) {
	want := Config{
		Env: "Copy-v0", Base: 5, MaxSteps: 200, Curriculum: CurriculumShared,
		Algo: AlgoSparse, Form: FormSeparate, Alpha: 0.05, TsallisQ: 1.5,
		Gamma: 0.9, Rollout: 10, CriticWeight: 1.0, PGScale: PGScaleInverseAlpha,
		Net: NetAuto, Hidden: 128, MLPHidden: 64, LogitInitScale: 1, ValueScale: 1,
		LambdaInit: LambdaInitOne, EmbedStd: 0.01, Optimizer: "adam",
		NumEnvs: 1, StepsPerIter: 100, SubEpisodes: 25, ReplaySteps: 1_000_000, RecencyWeight: 0.01,
		LearningRate: 0.005, AdamBeta1: 0.9, AdamBeta2: 0.999, AdamEps: 2e-4, ClipNorm: 10,
		BatchSize: 400, Replay: true, ReplayBatchSize: 0, ReplayCapacity: 10000,
		ReplayAlpha: 0.5, ReplayUniform: 0.1, ReplayPriority: PriorityReward, ReplayEviction: EvictRandom,
		Iters: 2000, Seed: 1, EvalEvery: 5, EvalEpisodes: 100, CheckpointEvery: 50,
		RewardThreshold: 25,
	}
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

// Every preset value names a flag and parses; with nothing given each lands on its field (for its
// algorithm only), and a flag given keeps its value.
func TestLongEpisodePreset(t *testing.T) {
	for _, algo := range []string{AlgoSparse, AlgoSoft, AlgoTsallis} {
		c := Default()
		c.Algo = algo
		if err := c.ApplyLongEpisodeDefaults(func(string) bool { return false }); err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("%s: the preset is invalid: %v", algo, err)
		}
		for _, v := range LongEpisodePreset() {
			if v.Source == "" {
				t.Errorf("--%s: no source", v.Flag)
			}
			if v.Algo != "" && v.Algo != algo {
				continue
			}
			ref := Default()
			ref.Algo = algo
			fs := flag.NewFlagSet("ref", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			ref.RegisterFlags(fs)
			if err := fs.Set(v.Flag, v.Value); err != nil {
				t.Fatalf("--%s %s: %v", v.Flag, v.Value, err)
			}
			if got, want := flagValue(t, &c, v.Flag), fs.Lookup(v.Flag).Value.String(); got != want {
				t.Errorf("%s: --%s is %s after the preset, want %s", algo, v.Flag, got, want)
			}
		}
		// Every flag given keeps the value it was given.
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
