package config

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestDefaultIsValidAndPaperValues(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatalf("default config invalid: %v", err)
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"gamma", c.Gamma, 0.9},
		{"rollout", float64(c.Rollout), 10},
		{"lr", c.LearningRate, 0.005},
		{"batch", float64(c.BatchSize), 400},
		{"replay capacity", float64(c.ReplayCapacity), 10000},
		{"replay alpha", c.ReplayAlpha, 0.5},
		{"replay uniform", c.ReplayUniform, 0.1},
		{"hidden", float64(c.Hidden), 128},
		{"adam eps", c.AdamEps, 2e-4},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

func TestValidateNamesField(t *testing.T) {
	cases := []struct {
		field string
		mut   func(*Config)
	}{
		{"algo", func(c *Config) { c.Algo = "greedy" }},
		{"form", func(c *Config) { c.Form = "both" }},
		{"alpha", func(c *Config) { c.Alpha = 0 }},
		{"gamma", func(c *Config) { c.Gamma = 1.5 }},
		{"rollout", func(c *Config) { c.Rollout = 0 }},
		{"tsallis_q", func(c *Config) { c.Algo = AlgoTsallis; c.TsallisQ = 1 }},
		{"replay_priority", func(c *Config) { c.ReplayPriority = "td" }},
		{"pg_scale", func(c *Config) { c.PGScale = "x" }},
		{"batch_size", func(c *Config) { c.BatchSize = 0 }},
		{"alpha_start", func(c *Config) { c.AlphaStart, c.AlphaDecay = c.Alpha/2, 0.5 }},
		{"alpha_decay", func(c *Config) { c.AlphaStart, c.AlphaDecay = 1, 1.5 }},
		{"alpha_decay", func(c *Config) { c.AlphaDecay = 0.5 }},
		{"alpha_auto", func(c *Config) { c.AlphaStart, c.AlphaDecay, c.AlphaAuto = 1, 0.5, true }},
		{"explore", func(c *Config) { c.Explore = 1 }},
		{"explore", func(c *Config) { c.Explore = -0.1 }},
		{"explore_share", func(c *Config) { c.Explore, c.ExploreShare = 0.1, 1.5 }},
		{"explore_share", func(c *Config) { c.ExploreShare = 0.5 }},
		{"explore_decay", func(c *Config) { c.Explore, c.ExploreDecay = 0.3, 1.5 }},
		{"explore_decay", func(c *Config) { c.Explore, c.ExploreDecay = 0.3, -0.1 }},
		{"explore_decay", func(c *Config) { c.ExploreDecay = 0.5 }},
		{"explore_temp", func(c *Config) { c.Explore, c.ExploreTemp = 0.3, -1 }},
		{"explore_temp", func(c *Config) { c.Explore, c.ExploreTemp = 0.3, math.Inf(1) }},
		{"explore_temp", func(c *Config) { c.ExploreTemp = 2 }},
		{"replay_priority", func(c *Config) { c.ReplayPriority = "surprise" }},
	}
	for _, tc := range cases {
		c := Default()
		tc.mut(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: error %v does not name the field", tc.field, err)
		}
	}
}

func TestFlagsAndJSONRoundTrip(t *testing.T) {
	c := Default()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	c.RegisterFlags(fs)
	if err := fs.Parse([]string{"--algo", "soft", "--base", "40", "--lr", "0.01", "--replay-priority", "recency", "--seed", "7"}); err != nil {
		t.Fatal(err)
	}
	if c.Algo != "soft" || c.Base != 40 || c.LearningRate != 0.01 || c.ReplayPriority != "recency" || c.Seed != 7 {
		t.Fatalf("flags not applied: %+v", c)
	}
	path := filepath.Join(t.TempDir(), "config.json")
	if err := c.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	back, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if back != c {
		t.Fatalf("round trip changed the config:\n%+v\n%+v", back, c)
	}
}

// WriteFile replaces the file rather than writing into it: a hard link to the old file keeps the
// old content (an in-place write, torn by a crash, would change both), and no temporary is left.
func TestWriteFileIsAtomicReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	old := Default()
	if err := old.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "old.json")
	if err := os.Link(path, link); err != nil {
		t.Fatalf("hard link: %v", err)
	}
	next := Default()
	next.Iters = 7
	if err := next.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want Config
	}{{path, next}, {link, old}} {
		got, err := ReadFile(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%s: iters %d, want %d", filepath.Base(tc.path), got.Iters, tc.want.Iters)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("dir holds %d entries, want 2 (no temporaries)", len(entries))
	}
	if err := next.WriteFile(filepath.Join(dir, "missing", "config.json")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("write into a missing dir: %v", err)
	}
}

func TestDiff(t *testing.T) {
	a := Default()
	b := a
	b.Alpha, b.Seed = 0.5, 9
	tests := []struct {
		name string
		a, b Config
		want []string
	}{
		{"equal", a, a, nil},
		{"two fields", a, b, []string{"alpha: 0.05 -> 0.5", "seed: 1 -> 9"}},
	}
	for _, tc := range tests {
		if got := Diff(tc.a, tc.b); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// The annealed exploration probability at given iterations: the released code's schedule form,
// a factor per 100 iterations, and a constant without a decay.
func TestExploreAt(t *testing.T) {
	for _, tc := range []struct {
		explore, decay float64
		it             int
		want           float64
	}{
		{0.3, 0, 0, 0.3},
		{0.3, 0, 5000, 0.3},
		{0.3, 0.5, 0, 0.3},
		{0.3, 0.5, 100, 0.15},
		{0.3, 0.5, 250, 0.3 * math.Pow(0.5, 2.5)},
		{0.3, 0.5, 1000, 0.3 / 1024},
		{0.3, 1, 1000, 0.3},
		{0, 0, 100, 0},
	} {
		c := Default().CollectConfig
		c.Explore, c.ExploreDecay = tc.explore, tc.decay
		if got := c.ExploreAt(tc.it); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("explore %v, decay %v: at iteration %d %v, want %v", tc.explore, tc.decay, tc.it, got, tc.want)
		}
	}
}

// The replay ratio's arithmetic, as pcl train -h and the run's log state it.
func TestRowsPerEnvStep(t *testing.T) {
	for _, tc := range []struct {
		trainSteps, subEpisodes, numEnvs, stepsPerIter int
		gradientSteps                                  int
		rows                                           float64
	}{
		{0, 25, 1, 100, 1, 25}, // the paper: one step on 25 sub-episodes per 100 env steps
		{1, 25, 1, 100, 1, 25},
		{4, 25, 1, 100, 4, 100},
		{8, 64, 2, 10, 8, 256},
	} {
		c := Config{
			UpdatesConfig: UpdatesConfig{TrainSteps: tc.trainSteps},
			ReplayConfig:  ReplayConfig{SubEpisodes: tc.subEpisodes},
			CollectConfig: CollectConfig{NumEnvs: tc.numEnvs, StepsPerIter: tc.stepsPerIter},
		}
		if g, r := c.GradientSteps(), c.RowsPerEnvStep(); g != tc.gradientSteps || r != tc.rows {
			t.Errorf("%+v: %d gradient steps and %v rows per env step, want %d and %v", c, g, r, tc.gradientSteps, tc.rows)
		}
	}
}

// The weight mode is worked out from the fields in one place, and WeightControl describes it.
func TestWeightMode(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func(*LearnerConfig)
		mode    WeightMode
		control string
	}{
		{"fixed", func(*LearnerConfig) {}, WeightFixed, ""},
		{"schedule", func(c *LearnerConfig) { c.AlphaStart, c.AlphaDecay = 0.1, 0.708 }, WeightSchedule, "from 0.1, ×0.708/100 it"},
		{"automatic", func(c *LearnerConfig) { c.AlphaAuto = true }, WeightLearned, WeightAuto},
	} {
		c := Default().LearnerConfig
		tc.edit(&c)
		if got := c.WeightMode(); got != tc.mode {
			t.Errorf("%s: mode %d, want %d", tc.name, got, tc.mode)
		}
		if got := c.WeightControl(); got != tc.control {
			t.Errorf("%s: control %q, want %q", tc.name, got, tc.control)
		}
	}
}
